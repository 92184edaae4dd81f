// The runtime's start-up sweep: what is due fires, an open incident left without a timer for its
// current attempt is resumed, and nothing is delivered twice for one attempt.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import type { ClusterEtcd } from '../../../functions/ports/cluster-etcd.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { createLocalRuntime, type LocalRuntime } from '../../../infra/runtime/runtime.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { silentEtcd, tempDir, waitFor, type TempDir } from './helpers.ts';

describe('local runtime start-up', () => {
  let dir: TempDir;
  let runtime: LocalRuntime | undefined;
  let events: EventEnvelope[];

  let handlerErrors: unknown[];

  const start = async (etcdFor: () => ClusterEtcd = silentEtcd) => {
    runtime = await createLocalRuntime({
      statePath: dir.file('state.sqlite'),
      directory: createStaticDirectory([{ clusterId: 'c1', endpoints: ['http://127.0.0.1:1'], policy: parsePolicy() }]),
      etcdFor,
      redeliveryDelaysMs: [10, 10],
      logLevel: 'SILENT',
      onHandlerError: (_fn, error) => handlerErrors.push(error),
    });
    runtime.bus.subscribe((e) => events.push(e));
    await runtime.start();
    return runtime;
  };

  /** An open incident at `attempt`, written by an earlier process. */
  const openIncident = async (targetKey: string, attempt: number, clusterId = 'c1') => {
    const store = openSqliteStore({ path: dir.file('state.sqlite') });
    try {
      const { incident } = await store.openOrJoin({ clusterId, targetKey, target: { memberName: targetKey }, reason: 'r', now: 0 });
      await store.updateIncident(incident.incidentId, { attempt }, { expectVersion: incident.version, now: 0 });
      return { incidentId: incident.incidentId, store };
    } catch (error) {
      await store.close();
      throw error;
    }
  };

  const retryDues = (incidentId: string) =>
    events.filter((e) => e.detailType === 'RetryDue' && e.detail.incidentId === incidentId).map((e) => (e.detail as { attempt: number }).attempt);

  beforeEach(() => {
    dir = tempDir();
    events = [];
    handlerErrors = [];
  });
  afterEach(async () => {
    await runtime?.stop({ drainTimeoutMs: 100 });
    runtime = undefined;
    dir.remove();
  });

  it('a retry that became due while down fires once and is not resumed a second time', async () => {
    const { incidentId, store } = await openIncident('etcd1', 2);
    await store.putTimer({
      name: `${incidentId}-retry-2`,
      fireAt: 1,
      payload: { detailType: 'RetryDue', detail: { incidentId, clusterId: 'c1', attempt: 2, at: new Date(1).toISOString(), reason: 'ELECTION_IN_PROGRESS' } },
    });
    await store.close();

    const rt = await start();

    expect(retryDues(incidentId)).toEqual([2]);
    // Nothing is left to deliver that attempt again.
    expect(await rt.store.dueTimers(Number.MAX_SAFE_INTEGER)).toEqual([]);
  });

  it('an open incident with no timer, or only a stale one, is resumed once, at the attempt after its current one', async () => {
    const orphan = await openIncident('etcd1', 3);
    await orphan.store.close();
    const stale = await openIncident('etcd2', 5);
    // A timer of an earlier attempt would be ignored as stale by probe-members: it does not count.
    await stale.store.putTimer({
      name: `${stale.incidentId}-retry-4`,
      fireAt: Date.now() + 3_600_000,
      payload: {
        detailType: 'RetryDue',
        detail: { incidentId: stale.incidentId, clusterId: 'c1', attempt: 4, at: new Date().toISOString(), reason: 'ELECTION_IN_PROGRESS' },
      },
    });
    await stale.store.close();

    await start();

    // The cut-off attempt may hold claims nothing will release: the resume is the next attempt.
    expect(retryDues(orphan.incidentId)).toEqual([4]);
    expect(retryDues(stale.incidentId)).toEqual([6]);
    expect(events.filter((e) => e.detailType === 'RetryDue').map((e) => (e.detail as { reason: string }).reason)).toEqual([
      'RUNTIME_RESUMED',
      'RUNTIME_RESUMED',
    ]);
  });

  it('a timer holding an invalid event becomes a dead letter instead of being retried forever', async () => {
    const rt = await start();
    await rt.scheduler.schedule({ name: 'bad', at: Date.now(), event: { detailType: 'RetryDue', detail: { incidentId: 'x' } } });

    await waitFor(async () => (await rt.store.listDeadLetters()).length === 1, 'the dead letter');
    const [dead] = await rt.store.listDeadLetters();
    expect(dead).toMatchObject({ source: 'timer', detailType: 'RetryDue' });
    expect(dead!.error).toContain('clusterId');
    await waitFor(async () => (await rt.store.nextTimer()) === undefined, 'the timer to be deleted');
  });

  it('an incident of a cluster this runtime does not know is tried once, not re-armed forever', async () => {
    const { incidentId, store } = await openIncident('etcd1', 0, 'elsewhere');
    await store.close();

    const rt = await start();
    await waitFor(() => handlerErrors.length > 0, 'the resumed probe to fail');
    // recover() runs on the failure's own turn, its store calls on microtasks: one more turn settles it.
    await new Promise((resolve) => setImmediate(resolve));

    expect(String(handlerErrors[0])).toContain('elsewhere');
    expect(retryDues(incidentId)).toEqual([1]);
    expect(await rt.store.dueTimers(Number.MAX_SAFE_INTEGER)).toEqual([]);
  });

  it('a step failing on every delivery is delivered three times, then its incident resumes later (STEP_FAILED), not stranded', async () => {
    let probes = 0;
    const failingEtcd = (): ClusterEtcd =>
      ({
        prober: {
          probe: () => {
            probes++;
            return Promise.reject(new Error('prober exploded'));
          },
        },
      }) as unknown as ClusterEtcd;
    const rt = await start(failingEtcd);
    const now = new Date().toISOString();
    await rt.submit({ clusterId: 'c1', target: { memberName: 'etcd1' }, reason: 'r', source: 'test', observedAt: now, at: now });

    await waitFor(async () => (await rt.store.listIncidents())[0]?.attempt === 1, 'the incident to resume at attempt 1');
    expect(probes).toBe(3);
    const [incident] = await rt.store.listIncidents();
    expect(incident).toMatchObject({ state: 'open', attempt: 1, waits: 0 });
    const journal = await rt.store.journal(incident!.incidentId);
    expect(journal.find((e) => e.step === 'step-failed')).toMatchObject({
      detail: { functionName: 'probe-members', detailType: 'MemberUnhealthy', attempt: 0, error: 'prober exploded', resumedAttempt: 1 },
    });
    const timers = await rt.store.dueTimers(Number.MAX_SAFE_INTEGER);
    expect(timers.map((t) => (t.payload as { detail: { attempt: number; reason: string } }).detail)).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'STEP_FAILED' }),
    ]);
    expect(handlerErrors).toHaveLength(1);
  });

  it('a report that failed on every delivery before any incident was opened is kept as a dead letter', async () => {
    const rt = await start();
    // The store refuses to open incidents: nothing exists that could be resumed or blocked.
    rt.store.openOrJoin = () => Promise.reject(new Error('disk full'));
    const now = new Date().toISOString();
    await rt.submit({ clusterId: 'c1', target: { memberName: 'etcd1' }, reason: 'r', source: 'test', observedAt: now, at: now });

    await waitFor(async () => (await rt.store.listDeadLetters()).length === 1, 'the dead letter');
    const [dead] = await rt.store.listDeadLetters();
    expect(dead).toMatchObject({ source: 'probe-members handler', detailType: 'MemberUnhealthy' });
    expect(dead!.error).toBe('failed on every delivery, and no incident was opened: disk full');
    expect(JSON.parse(dead!.payload)).toMatchObject({ detail: { target: { memberName: 'etcd1' } } });
  });

  it('stop() ends a wait for an outcome at once, instead of an hour later', async () => {
    const rt = await start();
    const waiting = rt.waitForOutcome({ clusterId: 'c1' }, 3_600_000);
    await rt.stop({ drainTimeoutMs: 100 });
    runtime = undefined;
    // Without the fix this waits out the hour, and the test its own timeout.
    await expect(waiting).rejects.toThrow('the runtime stopped before an outcome for cluster c1');
  });
});
