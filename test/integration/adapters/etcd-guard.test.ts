// The cluster guard on a real etcd: a lock bound to a lease and taken in a transaction, renewed
// onto fresh leases, lapsing when its holder stops renewing, and the removal record beside it.
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEtcdGuards, type EtcdGuards } from '../../../functions/adapters/etcd/etcd-guard.ts';
import { EtcdCallError, type EndpointTarget } from '../../../functions/ports/etcd.ts';
import { WaitAborted, waitFor } from '../../../functions/lib/wait-for.ts';
import { refusedEndpoint, startSingleEtcd, type SingleEtcd } from './single-etcd.ts';

const direct = (...endpoints: string[]): EndpointTarget[] => endpoints.map((endpoint) => ({ endpoint, path: 'direct' }));

describe('the cluster guard in etcd', () => {
  let etcd: SingleEtcd;
  let guards: EtcdGuards;
  let refused: string;
  beforeAll(async () => {
    etcd = await startSingleEtcd();
    guards = createEtcdGuards({ prefix: '/test-guard', deadlineMs: 1_000 });
    refused = await refusedEndpoint();
  });
  afterAll(async () => {
    guards?.close();
    await etcd?.stop();
  });

  it('one holder at a time: the second is told who holds it and since when; release frees it', async () => {
    const guard = guards.at(direct(refused, etcd.endpoint));
    expect(guard.where).toBe('etcd key /test-guard/lock');
    expect(await guard.acquire('a', 10_000)).toEqual({ held: true });
    const other = await guard.acquire('b', 10_000);
    expect(other).toMatchObject({ held: false, holder: { owner: 'a' } });
    expect(await guard.renew('b', 10_000)).toBe(false);
    // b's release must not free a's lock.
    await guard.release('b');
    expect(await guard.acquire('b', 10_000)).toMatchObject({ held: false });
    expect(await guard.renew('a', 10_000)).toBe(true);
    await guard.release('a');
    expect(await guard.acquire('b', 10_000)).toEqual({ held: true });
    await guard.release('b');
  });

  it('an earlier run of the same incident, left holding the lock by a crash, is taken over; nobody else is', async () => {
    const guard = guards.at(direct(etcd.endpoint));
    expect(await guard.acquire('incident:x:run1', 30_000)).toEqual({ held: true });
    expect(await guard.acquire('incident:y:run1', 30_000, { takeOverFrom: 'incident:y:' })).toMatchObject({
      held: false,
      holder: { owner: 'incident:x:run1' },
    });
    expect(await guard.acquire('incident:x:run2', 30_000, { takeOverFrom: 'incident:x:' })).toEqual({ held: true });
    expect(await guard.renew('incident:x:run1', 30_000)).toBe(false);
    await guard.release('incident:x:run2');
  });

  it('a holder that stops renewing loses the lock when its lease lapses; renewing keeps it', async () => {
    const guard = guards.at(direct(etcd.endpoint));
    expect(await guard.acquire('renewer', 2_000)).toEqual({ held: true });
    // Renewed past two lease lengths: nobody else gets it meanwhile. A renewal refused or a lock
    // taken ends the wait at once, with that first failure, not a later one it caused.
    const until = Date.now() + 4_500;
    await waitFor(
      async () => {
        if (!(await guard.renew('renewer', 2_000))) throw new WaitAborted('a renewal of the held lock was refused');
        const thief = await guard.acquire('thief', 2_000);
        if (thief.held) throw new WaitAborted('another owner took the lock while it was renewed');
        return Date.now() >= until ? true : undefined;
      },
      { timeoutMs: 8_000, intervalMs: 100, what: 'renewals to outlast two leases' },
    );
    // Now the holder dies: no more renewals, and the lease lapses within its TTL.
    await waitFor(async () => ((await guard.acquire('thief', 2_000)).held ? true : undefined), {
      timeoutMs: 8_000,
      intervalMs: 100,
      what: 'the dead holder to lose the lock',
    });
    expect(await guard.renew('renewer', 2_000)).toBe(false);
    await guard.release('thief');
  }, 20_000);

  it('keeps the removals for every remediator to read', async () => {
    const guard = guards.at(direct(etcd.endpoint));
    expect(await guard.removals()).toEqual([]);
    const record = {
      memberId: 'abc',
      memberName: 'etcd-1',
      incidentId: 'i-1',
      targetKey: 'memberName=etcd-1',
      at: 1_700_000_000_000,
      sizeBefore: 3,
      by: 'incident:i-1:0001',
      confirmed: true,
    };
    await guard.saveRemovals([record]);
    expect(await guards.at(direct(refused, etcd.endpoint)).removals()).toEqual([record]);
  });

  it('keeps the holds beside the lock: a pause, a fleet pause and a storm hold, each lifted on its own', async () => {
    const guard = guards.at(direct(etcd.endpoint));
    const other = guards.at(direct(refused, etcd.endpoint));
    expect(await other.holds()).toEqual({});
    const pause = { by: 'ops@box', at: 1_700_000_000_000, why: 'upgrade', where: 'state file /x/a.sqlite on box' };
    expect(await guard.setHold('pause', pause)).toBe(true);
    // The same hold again changes nothing, and says so.
    expect(await guard.setHold('pause', pause)).toBe(false);
    const storm = { ...pause, by: 'the storm guard', count: 3, threshold: 2, registered: 5, clusters: ['a', 'b', 'c'], since: 1, underFrom: 2, liftsAt: 3 };
    await guard.setHold('storm', storm);
    await guard.setHold('fleet-pause', { ...pause, why: 'zone b' });
    const keyed = <T>(value: T, kind: string) => ({ ...value, key: `/test-guard/holds/${kind}` });
    expect(await other.holds()).toEqual({
      pause: keyed(pause, 'pause'),
      storm: keyed(storm, 'storm'),
      fleetPause: keyed({ ...pause, why: 'zone b' }, 'fleet-pause'),
    });
    expect(await guard.setHold('pause', null)).toBe(true);
    expect(await guard.setHold('pause', null)).toBe(false);
    expect(await other.holds()).toEqual({ storm: keyed(storm, 'storm'), fleetPause: keyed({ ...pause, why: 'zone b' }, 'fleet-pause') });
    await guard.setHold('storm', null);
    await guard.setHold('fleet-pause', null);
    expect(await other.holds()).toEqual({});
  });

  it('a value under the holds that is not one of ours still holds, said as unreadable; keys beside it are not holds', async () => {
    const guard = guards.at(direct(etcd.endpoint));
    const client = new Etcd3({ hosts: etcd.endpoint });
    try {
      await client.put('/test-guard/holds/pause').value('{"by": 1}');
      await client.put('/test-guard/holds/other').value('x');
      await client.put('/test-guard/holdsX').value('x');
      const holds = await guard.holds();
      expect(Object.keys(holds)).toEqual(['pause']);
      expect(holds.pause?.why).toMatch(/^the hold at etcd key \/test-guard\/holds\/pause cannot be read/);
    } finally {
      await client.delete().prefix('/test-guard/holds');
      client.close();
    }
  });

  it('with no member answering, the call fails as refused, so the caller can fall back', async () => {
    const none = guards.at(direct(refused));
    const failure = await none.acquire('a', 5_000).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(EtcdCallError);
    expect((failure as EtcdCallError).failure.kind).toBe('refused');
  });
});
