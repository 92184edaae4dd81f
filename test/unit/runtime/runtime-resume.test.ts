// The runtime's resume option: start() resumes only the incidents a caller names; every other
// incident open in the state file is left as it was (no sweep, no timer of its fires), while
// incidents opened after start run as usual.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { incidentIdOf, type EventEnvelope } from '../../../events/catalogue.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { createLocalRuntime, type LocalRuntime, type LocalRuntimeOptions } from '../../../infra/runtime/runtime.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { silentEtcd, tempDir, waitFor, type TempDir } from './helpers.ts';

describe('local runtime resume option', () => {
  let dir: TempDir;
  let runtime: LocalRuntime | undefined;
  let events: EventEnvelope[];

  const start = async (resume?: LocalRuntimeOptions['resume']) => {
    runtime = await createLocalRuntime({
      statePath: dir.file('state.sqlite'),
      directory: createStaticDirectory([{ clusterId: 'c1', endpoints: ['http://127.0.0.1:1'], policy: parsePolicy() }]),
      etcdFor: silentEtcd,
      logLevel: 'SILENT',
      ...(resume === undefined ? {} : { resume }),
    });
    runtime.bus.subscribe((e) => events.push(e));
    await runtime.start();
    return runtime;
  };

  /** Open incidents left by an earlier process, each with no timer, one with a retry already due. */
  const leave = async (): Promise<{ named: Incident; other: Incident; due: Incident }> => {
    const store = openSqliteStore({ path: dir.file('state.sqlite') });
    try {
      const open = async (name: string) =>
        (await store.openOrJoin({ clusterId: 'c1', targetKey: `memberName=${name}`, target: { memberName: name }, reason: 'r', now: 0 })).incident;
      const [named, other, due] = [await open('etcd1'), await open('etcd2'), await open('etcd3')];
      await store.putTimer({
        name: `${due.incidentId}-retry-0`,
        fireAt: 1,
        payload: {
          detailType: 'RetryDue',
          detail: { incidentId: due.incidentId, clusterId: 'c1', attempt: 0, at: new Date(1).toISOString(), reason: 'ELECTION_IN_PROGRESS' },
        },
      });
      return { named, other, due };
    } finally {
      await store.close();
    }
  };

  const touched = (incidentId: string) => events.filter((e) => incidentIdOf(e) === incidentId).map((e) => e.detailType);

  beforeEach(() => {
    dir = tempDir();
    events = [];
  });
  afterEach(async () => {
    await runtime?.stop({ drainTimeoutMs: 100 });
    runtime = undefined;
    dir.remove();
  });

  it('by default resumes every open incident and fires every due timer', async () => {
    const { named, other, due } = await leave();
    await start();
    expect(touched(named.incidentId)).toEqual(['RetryDue']);
    expect(touched(other.incidentId)).toEqual(['RetryDue']);
    expect(touched(due.incidentId)).toEqual(['RetryDue']);
  });

  it('with incident ids, resumes only those; the others, their timers included, stay as they were', async () => {
    const { named, other, due } = await leave();
    const rt = await start({ incidentIds: [named.incidentId] });
    expect(touched(named.incidentId)).toEqual(['RetryDue']);
    await rt.sweep();
    await rt.scheduler.runDue();

    expect(touched(other.incidentId)).toEqual([]);
    expect(touched(due.incidentId)).toEqual([]);
    expect(await rt.store.getIncident(other.incidentId)).toEqual(other);
    expect(await rt.store.getIncident(due.incidentId)).toEqual(due);
    // The left incident's timer is kept for whoever resumes it later.
    expect((await rt.store.dueTimers(Number.MAX_SAFE_INTEGER)).map((t) => t.name)).toContain(`${due.incidentId}-retry-0`);
  });

  it('with no ids, resumes nothing but still runs what is reported after start', async () => {
    const { named } = await leave();
    const rt = await start({ incidentIds: [] });
    expect(touched(named.incidentId)).toEqual([]);

    const now = new Date().toISOString();
    await rt.submit({ clusterId: 'c1', target: { memberName: 'etcd9' }, reason: 'r', source: 'test', observedAt: now, at: now });
    await waitFor(async () => (await rt.store.listIncidents({ state: 'open' })).some((i) => i.target['memberName'] === 'etcd9'), 'the new incident to open');
    // A new incident's own timers fire: it is this runtime's to run.
    const opened = (await rt.store.listIncidents({ state: 'open' })).find((i) => i.target['memberName'] === 'etcd9')!;
    await rt.scheduler.schedule({
      name: `${opened.incidentId}-retry-0`,
      at: 1,
      event: {
        detailType: 'RetryDue',
        detail: { incidentId: opened.incidentId, clusterId: 'c1', attempt: 0, at: new Date(1).toISOString(), reason: 'ELECTION_IN_PROGRESS' },
      },
    });
    await waitFor(() => events.some((e) => e.detailType === 'RetryDue' && e.detail.incidentId === opened.incidentId), "the new incident's retry to fire");
  });
});
