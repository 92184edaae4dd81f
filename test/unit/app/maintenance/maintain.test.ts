// Maintenance's steps on fakes (a real SQLite store, an etcd whose figures the test keeps): one step
// a delivery, planned again from the figures before each; the leader last, after a move; under
// NOSPACE no lock is taken, and none is run while someone holds it; a redelivery or a crash runs
// no step twice at once; a failed step ends the run and the removal waiting on it blocks, saying why.
import { afterEach, describe, expect, it } from 'vitest';
import type { DetailOf } from '../../../../events/catalogue.ts';
import { maintain } from '../../../../functions/app/maintenance/index.ts';
import { EtcdCallError } from '../../../../functions/ports/etcd.ts';
import { stormHoldOf } from '../../../../functions/core/fleet/index.ts';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { scheduleRetry } from '../../../../functions/app/incident/schedule-retry.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { endpointOf, id, sample, type MemberSpec } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const MiB = 1024 * 1024;

/** A 3-member cluster at its quota: its figures change as the maintenance acts on it. */
function atQuota(h: Harness, members = 3) {
  const state = { leader: 0, alarmed: true, free: new Set(Array.from({ length: members }, (_, i) => i)) };
  h.setSample((at) =>
    sample(
      at,
      Array.from({ length: members }, (_, i): MemberSpec => ({
        i,
        leader: state.leader,
        db: state.free.has(i) ? [4 * MiB, MiB] : [MiB, MiB],
        ...(state.alarmed ? { alarms: ['NOSPACE'] } : {}),
      })),
    ),
  );
  h.onMaintenance = (call) => {
    const defragmented = /^defragment (.*)$/.exec(call)?.[1];
    if (defragmented) state.free.delete(Array.from({ length: members }, (_, i) => i).find((i) => endpointOf(i) === defragmented)!);
    if (call === 'disarm') state.alarmed = false;
  };
  h.onMoveLeader = (to) => {
    state.leader = Number(Array.from({ length: members }, (_, i) => i).find((i) => id(i) === to));
  };
  return state;
}

const due = (askedBy = 'incident:test'): DetailOf<'MaintenanceDue'> => ({ clusterId: 'c1', at: new Date(0).toISOString(), askedBy });

/** Delivers MaintenanceDue, then each one the steps ask for, until the run ends or a step fails. */
async function untilEnded(h: Harness, limit = 20) {
  let outcome = await maintain(h.deps, due());
  // A failed step asks for nothing: the next ask (the removal's next look) tries it again.
  for (let i = 0; i < limit && outcome.kind === 'stepped' && outcome.result.ok; i++) outcome = await maintain(h.deps, h.lastOf('MaintenanceDue'));
  return outcome;
}

describe('maintenance clears NOSPACE one member at a time', () => {
  it('the followers first, then a move off the leader and the leader, disarm, and a write checked; no lock under NOSPACE, the lock for the check', async () => {
    h = harness();
    atQuota(h);
    const outcome = await untilEnded(h);
    expect(outcome).toMatchObject({ kind: 'ended', outcome: 'done', reason: 'MAINTENANCE_NOT_NEEDED' });
    expect(h.calls.maintenance).toEqual([`defragment ${endpointOf(1)}`, `defragment ${endpointOf(2)}`, `defragment ${endpointOf(0)}`, 'disarm']);
    expect(h.calls.moveLeader).toEqual([{ endpoint: endpointOf(0), to: id(1) }]);
    // Under NOSPACE only who holds the lock is read; the write that checks the alarm is gone is the lock taken and let go.
    expect(h.guard.calls.filter((c) => c !== 'holds')).toEqual(['holder', 'holder', 'holder', 'holder', 'holder', 'acquire', 'release']);
    const ended = h.lastOf('MaintenanceEnded');
    expect(ended.outcome).toBe('done');
    expect((ended.evidence.steps as { key: string }[]).map((s) => s.key)).toEqual([
      `defragment:${id(1)}`,
      `defragment:${id(2)}`,
      `move-leader:${id(0)}`,
      `defragment:${id(0)}`,
      'disarm',
      'verify',
    ]);
    const { record } = (await h.deps.store.maintenanceRecord('c1'))!;
    expect(record.run).toBeUndefined();
    expect(Object.keys(record.defragmentedAt).sort()).toEqual([id(0), id(1), id(2)].sort());
  });

  it('a redelivery while a step runs finds it claimed; a crash leaves a claim that lapses at the step deadline, and the step runs again', async () => {
    h = harness();
    atQuota(h);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    h.onMaintenance = () => {
      running += 1;
    };
    const original = h.deps.etcdFor;
    h.deps.etcdFor = (cluster) => {
      const etcd = original(cluster);
      const client = etcd.transport.client.bind(etcd.transport);
      return { ...etcd, transport: { ...etcd.transport, client: (t) => ({ ...client(t), defragment: async () => void (running++, await held) }) } };
    };
    const first = maintain(h.deps, due());
    await waitUntil(() => running === 1);
    expect(await maintain(h.deps, due('incident:again'))).toEqual({ kind: 'claimed-elsewhere', key: `defragment:${id(1)}` });
    release();
    expect(await first).toMatchObject({ kind: 'stepped', key: `defragment:${id(1)}` });
    expect(running).toBe(1);

    // A crash: the claim is written, the step never journaled. Until the claim lapses nobody runs it.
    const stored = (await h.deps.store.maintenanceRecord('c1'))!;
    const crashed = {
      ...stored.record,
      run: { ...stored.record.run!, claim: { key: `defragment:${id(2)}`, owner: 'maintenance:dead', until: h.clock.now() + 60_000 } },
    };
    await h.deps.store.saveMaintenanceRecord('c1', crashed, stored.version);
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'claimed-elsewhere' });
    h.clock.set(h.clock.now() + 60_001);
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'stepped', key: `defragment:${id(2)}` });
  });

  it('a step journaled nowhere (the store refused the write after it) fails the delivery, and its redelivery runs it again once the claim lapses', async () => {
    h = harness();
    atQuota(h);
    const save = h.deps.store.saveMaintenanceRecord.bind(h.deps.store);
    let saves = 0;
    h.deps.store.saveMaintenanceRecord = async (...args) => {
      // The claim is the first write, the journal line the second.
      if (++saves === 2) throw new Error('injected: SQLITE_FULL: database or disk is full');
      return save(...args);
    };
    await expect(maintain(h.deps, due())).rejects.toThrow(/SQLITE_FULL/);
    expect(h.calls.maintenance).toEqual([`defragment ${endpointOf(1)}`]);
    // Claimed until the step's deadline: a redelivery before it leaves the step alone.
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'claimed-elsewhere', key: `defragment:${id(1)}` });
    h.clock.set(h.clock.now() + 11 * 60_000);
    // A second defragmentation of a file already rewritten: idempotent, and the run goes on.
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'stepped', key: `defragment:${id(1)}` });
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'stepped', key: `defragment:${id(2)}` });
    expect(h.calls.maintenance).toEqual([`defragment ${endpointOf(1)}`, `defragment ${endpointOf(1)}`, `defragment ${endpointOf(2)}`]);
  });

  it('someone holding the cluster lock under NOSPACE: nothing is defragmented, the run waits, and goes on where it was once the lock is free', async () => {
    h = harness();
    atQuota(h);
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'stepped', key: `defragment:${id(1)}` });
    await h.guard.acquire('incident:other:1', 60_000);
    const waiting = await maintain(h.deps, due());
    expect(waiting).toMatchObject({ kind: 'waiting', reason: 'CLUSTER_LOCKED' });
    expect(waiting.kind === 'waiting' && waiting.message).toMatch(/incident:other:1 holds the cluster lock .*maintenance waits/);
    expect(h.calls.maintenance).toEqual([`defragment ${endpointOf(1)}`]);
    expect(h.events.filter((e) => e.detailType === 'MaintenanceEnded')).toEqual([]);
    await h.guard.release('incident:other:1');
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'stepped', key: `defragment:${id(2)}` });
  });

  it('a member no path reached raises NOSPACE again once a write is applied: the check names it and says to defragment it by hand, not to raise the quota', async () => {
    h = harness();
    const state = atQuota(h, 5);
    const applied = { write: false };
    h.onMaintenance = (call) => {
      const defragmented = /^defragment (.*)$/.exec(call)?.[1];
      if (defragmented) state.free.delete([0, 1, 2, 3, 4].find((i) => endpointOf(i) === defragmented)!);
      if (call === 'disarm') state.alarmed = false;
    };
    // The check of a write takes the cluster lock: etcd-4's own file, never defragmented, is still past its quota.
    const acquire = h.guard.acquire.bind(h.guard);
    h.guard.acquire = (...args) => {
      applied.write = true;
      return acquire(...args);
    };
    h.setSample((at) => {
      const s = sample(
        at,
        [0, 1, 2, 3, 4].map((i): MemberSpec => ({
          i,
          leader: state.leader,
          db: state.free.has(i) ? [4 * MiB, MiB] : [MiB, MiB],
          ...(state.alarmed ? { alarms: ['NOSPACE'] } : {}),
          // Alive (its peers hear it) and reached by no path of ours.
          ...(i === 4 ? { paths: 'refused' as const } : {}),
        })),
      );
      // etcd's alarm list is the cluster's: every member that answers reports etcd-4's.
      const raised = state.alarmed || applied.write;
      for (const m of s.members) if (m.status && raised) m.status = { ...m.status, othersAlarms: [{ member: id(4), alarm: 'NOSPACE' }] };
      return s;
    });
    const outcome = await untilEnded(h);
    expect(h.calls.maintenance.filter((c) => c.startsWith('defragment'))).toHaveLength(4);
    expect(outcome).toMatchObject({ kind: 'stepped', key: 'verify', result: { ok: false, reason: 'MAINTENANCE_STEP_FAILED' } });
    const { message } = (outcome as { result: { message: string } }).result;
    expect(message).toMatch(
      /etcd-4 .*raised NOSPACE again as it applied it: no path reached it, so it was never defragmented in this run; defragment it by hand/,
    );
    expect(message).not.toMatch(/quota-backend-bytes/);
  });

  it('a fleet storm holds a fragmentation run (nothing defragmented, saying when it lifts), and not the clearing of a NOSPACE alarm', async () => {
    const storm = { count: 6, threshold: 3, registered: 10, clusters: ['c2', 'c3', 'c4', 'c5', 'c6', 'c7'], since: 0, underFrom: 0 };
    h = harness({ maintenance: { enabled: true } });
    const state = atQuota(h);
    state.alarmed = false;
    h.setSample((at) =>
      sample(
        at,
        [0, 1, 2].map((i): MemberSpec => ({ i, leader: 0, db: [400 * MiB, 100 * MiB] })),
      ),
    );
    // As another remediator's store writes it into the cluster's etcd.
    await h.guard.setHold('storm', stormHoldOf({ ...storm, liftsAt: h.clock.now() + 600_000 }, 'elsewhere', h.clock.now()));
    const held = await maintain(h.deps, due('maintenance-check'));
    expect(held).toMatchObject({ kind: 'waiting', reason: 'FLEET_STORM' });
    expect((held as { message: string }).message).toMatch(
      /^Fleet storm since .*6 of 10 registered clusters .*nothing is defragmented until it lifts \(at .*\), or a person runs `etcd-remediator resume --storm`/,
    );
    expect(h.calls.maintenance).toEqual([]);
    await h.close();

    h = harness();
    atQuota(h);
    await h.guard.setHold('storm', stormHoldOf({ ...storm, liftsAt: h.clock.now() + 600_000 }, 'elsewhere', h.clock.now()));
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'stepped', key: `defragment:${id(1)}` });
  });

  it('a pause holds it, and the run is kept', async () => {
    h = harness();
    atQuota(h);
    await h.deps.store.setPause('c1', { by: 'ops', at: h.clock.now(), why: 'change freeze' });
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'waiting', reason: 'PAUSED' });
    expect(h.calls.maintenance).toEqual([]);
  });

  it('the cluster lock lost while a step ran (outside NOSPACE): the step is journaled, and the next one waits for the next ask', async () => {
    h = harness({ maintenance: { enabled: true, fragmentedMinBytes: 1024 * 1024, fragmentedShare: 0.5 } });
    const state = atQuota(h);
    state.alarmed = false;
    h.onMaintenance = (call) => {
      // Our lease lapses mid-defragmentation, and another remediator takes the lock.
      if (call.startsWith('defragment')) {
        h.clock.set(h.clock.now() + 120_000);
        void h.guard.acquire('incident:other:1', 600_000);
      }
    };
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'waiting', reason: 'LOCK_UNAVAILABLE' });
    expect(h.events.filter((e) => e.detailType === 'MaintenanceDue')).toEqual([]);
    const { record } = (await h.deps.store.maintenanceRecord('c1'))!;
    expect(record.run?.done.map((d) => `${d.key} ${d.outcome}`)).toEqual([`defragment:${id(1)} done`]);
    expect(record.run?.claim).toBeUndefined();
  });

  it('a leader move etcd refuses is tried again at the next ask, and the leader is defragmented only once it is a follower', async () => {
    h = harness();
    const state = atQuota(h);
    let refusals = 1;
    h.onMoveLeader = (to) => {
      if (refusals-- > 0) throw new EtcdCallError({ kind: 'other', grpcCode: 14, message: 'etcdserver: leader changed' });
      state.leader = [0, 1, 2].find((i) => id(i) === to)!;
    };
    // Both followers, then the refused move: the run waits, nothing more is asked for.
    expect(await untilEnded(h)).toMatchObject({ kind: 'stepped', key: `move-leader:${id(0)}`, result: { ok: false } });
    expect(h.calls.maintenance).toEqual([`defragment ${endpointOf(1)}`, `defragment ${endpointOf(2)}`]);
    // The next ask (the removal's next look) goes on: the move, then the old leader as a follower.
    expect(await untilEnded(h)).toMatchObject({ kind: 'ended', outcome: 'done' });
    expect(h.calls.maintenance).toEqual([`defragment ${endpointOf(1)}`, `defragment ${endpointOf(2)}`, `defragment ${endpointOf(0)}`, 'disarm']);
    const steps = h.lastOf('MaintenanceEnded').evidence.steps as { key: string; outcome: string }[];
    expect(steps.map((s) => `${s.key} ${s.outcome}`)).toEqual([
      `defragment:${id(1)} done`,
      `defragment:${id(2)} done`,
      `move-leader:${id(0)} failed`,
      `move-leader:${id(0)} done`,
      `defragment:${id(0)} done`,
      'disarm done',
      'verify done',
    ]);
  });

  it('a run left for an hour (nobody asked again) is ended, and the next one plans from the start: its steps never stand for a new alarm', async () => {
    h = harness();
    atQuota(h);
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'stepped', key: `defragment:${id(1)}` });
    h.clock.set(h.clock.now() + 2 * 3_600_000);
    expect(await maintain(h.deps, due())).toMatchObject({ kind: 'stepped', key: `defragment:${id(1)}` });
    const { record } = (await h.deps.store.maintenanceRecord('c1'))!;
    expect(record.lastRun).toMatchObject({ endReason: 'MAINTENANCE_ABANDONED', outcome: 'waiting' });
    expect(record.run?.done.map((d) => d.key)).toEqual([`defragment:${id(1)}`]);
  });

  it('a defragmentation that fails is tried again at the next ask; failing three times ends the run failed, and the removal waiting on it then blocks, saying why', async () => {
    h = harness();
    atQuota(h);
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    expect(await moveLeader(h.deps, h.lastOf('MembersProbed'))).toMatchObject({ kind: 'retry', reason: 'NOSPACE_CLEARING' });
    h.onMaintenance = () => {
      throw new EtcdCallError({ kind: 'timeout', grpcCode: 4, message: 'Deadline exceeded after 600.000s' });
    };
    for (let i = 0; i < 2; i++) {
      expect(await maintain(h.deps, h.lastOf('MaintenanceDue'))).toMatchObject({ kind: 'stepped', result: { ok: false } });
      expect(h.events.filter((e) => e.detailType === 'MaintenanceEnded')).toEqual([]);
    }
    expect(await maintain(h.deps, h.lastOf('MaintenanceDue'))).toEqual({ kind: 'ended', outcome: 'failed', reason: 'MAINTENANCE_STEP_FAILED' });
    await scheduleRetry(h.deps, h.lastOf('RetryRequested'));
    const retry = h.scheduled.at(-1)!;
    h.clock.set(Math.max(h.clock.now(), retry.at));
    await probeMembers(h.deps, { detailType: 'RetryDue', detail: retry.event.detail as never });
    expect(await moveLeader(h.deps, h.lastOf('MembersProbed'))).toMatchObject({ kind: 'block', reason: 'ETCD_NO_SPACE' });
    expect(h.lastOf('RemediationBlocked').message).toMatch(
      /blocked: the maintenance that clears it ended failed \(MAINTENANCE_STEP_FAILED\): etcd-1 .* was not defragmented \(direct .*Deadline exceeded/,
    );
  });
});

describe("AWS's maintenance round", () => {
  it('asks for every cluster: nothing is probed where maintenance is off or its period does not fall in the round', async () => {
    const round = (at: string): DetailOf<'MaintenanceDue'> => ({ clusterId: 'c1', at, askedBy: 'maintenance-round' });
    const counted = (h: Harness) => {
      const seen = { probes: 0 };
      atQuota(h);
      h.setSample((at) => {
        seen.probes += 1;
        return sample(
          at,
          [0, 1, 2].map((i): MemberSpec => ({ i, leader: 0, db: [400 * MiB, 100 * MiB] })),
        );
      });
      return seen;
    };
    h = harness();
    const off = counted(h);
    expect(await maintain(h.deps, round('2025-06-01T12:00:00.000Z'))).toEqual({ kind: 'not-due' });
    expect(off.probes).toBe(0);
    await h.close();

    h = harness({ maintenance: { enabled: true, checkEveryMs: 3_600_000 } });
    const hourly = counted(h);
    // The round whose 5 minutes hold the hour looks (13:00); the next one (13:05) does not.
    expect(await maintain(h.deps, round('2025-06-01T13:05:00.000Z'))).toEqual({ kind: 'not-due' });
    expect(hourly.probes).toBe(0);
    expect(await maintain(h.deps, round('2025-06-01T13:00:00.000Z'))).toMatchObject({ kind: 'stepped', key: `defragment:${id(1)}` });
    expect(hourly.probes).toBeGreaterThan(0);
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !done(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!done()) throw new Error('the condition never held');
}
