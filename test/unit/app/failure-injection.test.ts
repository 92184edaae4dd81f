// Failure injection over the whole pipeline, with no recovery sweep: the store, the bus and the
// scheduler fail once at each call a step makes (and, in a second matrix, from that call on), while
// every event is delivered twice and a failed delivery is retried as Lambda retries it. Whatever
// fails, the incident reaches its terminal state with one removal and one actuator request, or
// blocks with a reason; none is left open with nothing scheduled and nothing in flight.
import { afterAll, describe, expect, it } from 'vitest';
import { incidentIdOf } from '../../../events/catalogue.ts';
import type { ClusterDeps } from '../../../functions/app/common/deps.ts';
import { sweepStalled } from '../../../functions/app/incident/sweep.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import type { ReplaceRequest } from '../../../functions/ports/actuator.ts';
import { manualClock } from '../../support/manual-clock.ts';
import type { ClusterEntry } from '../../../functions/ports/cluster-directory.ts';
import { EtcdCallError, type EtcdMemberClient } from '../../../functions/ports/etcd.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { endpointOf, id, sample } from '../core/fixtures.ts';
import { tempDir } from '../runtime/helpers.ts';
import { atLeastOnceDriver, type DriverLog } from './at-least-once.ts';
import { T0, unhealthy } from './harness.ts';
import { etcdGuardFake } from '../../support/fakes/etcd-guard-fake.ts';
import { memorySnapshots, streamEtcdSnapshot } from '../../support/etcd-snapshot-bytes.ts';

type Part = 'store' | 'bus' | 'scheduler';

interface Fault {
  part: Part;
  method: string;
  /** The call number (1-based, per part and method) that fails first. */
  at: number;
  mode: 'once' | 'always';
}

/** Wraps every method of `target` so calls are counted per method, and the fault's call throws. */
function faulty<T extends object>(part: Part, target: T, counts: Map<string, number>, fault: () => Fault | undefined): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        const key = `${part}.${prop}`;
        const n = (counts.get(key) ?? 0) + 1;
        counts.set(key, n);
        const f = fault();
        if (f && f.part === part && f.method === prop && (f.mode === 'once' ? n === f.at : n >= f.at)) {
          return Promise.reject(new Error(`injected: ${key} call ${n} failed`));
        }
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
}

/** A 3-member etcd that behaves as etcd does for the calls the pipeline makes. */
function fakeEtcd() {
  const state = { members: [0, 1, 2], leader: 'none' as number | 'none', term: 2, probes: 0, moves: 0, removals: [] as string[] };
  const probe = async (at: number) => {
    // The first probe lands in an election: the first decision is a retry, so the chain schedules.
    state.probes += 1;
    if (state.probes > 1 && state.leader === 'none') state.leader = 0;
    return sample(
      at,
      state.members.map((i) => ({ i, leader: state.leader, term: state.term })),
    );
  };
  const client = (endpoint: string): EtcdMemberClient => ({
    endpoint,
    path: 'direct',
    status: () => Promise.reject(new Error('unused')),
    memberList: () => Promise.reject(new Error('unused')),
    snapshot: (to) => streamEtcdSnapshot(to),
    moveLeader: async (to) => {
      if (state.leader === 'none' || endpoint !== endpointOf(state.leader)) {
        throw new EtcdCallError({ kind: 'other', grpcCode: 2, message: 'etcdserver: not leader' });
      }
      state.leader = [0, 1, 2].find((i) => id(i) === to)!;
      state.term += 1;
      state.moves += 1;
    },
    memberRemove: async (memberId) => {
      const i = state.members.find((m) => id(m) === memberId);
      if (i === undefined) throw new EtcdCallError({ kind: 'other', grpcCode: 5, message: 'etcdserver: member not found' });
      state.members = state.members.filter((m) => m !== i);
      state.removals.push(memberId);
      if (state.leader === i) state.leader = state.members[0]!;
      return [];
    },
  });
  return { state, probe, client };
}

interface Run {
  /** Undefined when the store never let the report open one. */
  incident?: Incident;
  etcd: ReturnType<typeof fakeEtcd>['state'];
  actuator: ReplaceRequest[];
  log: DriverLog;
  idle: boolean;
  counts: Map<string, number>;
  /** The store's own record of what it did, read past any fault. */
  journalSteps: string[];
}

/** Remediates etcd-0, the leader once the first election ends, under one injected fault. */
async function runPipeline(fault?: Fault): Promise<Run> {
  const dir = tempDir();
  const store = openSqliteStore({ path: dir.file('state.sqlite') });
  const clock = manualClock(T0);
  const etcd = fakeEtcd();
  // The lock and removal record as the cluster's etcd keeps them.
  const guard = etcdGuardFake(clock);
  const actuator: ReplaceRequest[] = [];
  const cluster: ClusterEntry = {
    clusterId: 'c1',
    endpoints: [endpointOf(0)],
    policy: parsePolicy({ electionTimeoutMs: 1_000, backoff: { baseMs: 1_000, capMs: 10_000 }, maxAttempts: 6 }),
  };
  const driver = atLeastOnceDriver(clock);
  const counts = new Map<string, number>();
  let active: Fault | undefined = fault;
  const deps: ClusterDeps = {
    store: faulty('store', store, counts, () => active),
    bus: faulty('bus', driver.bus, counts, () => active),
    scheduler: faulty('scheduler', driver.scheduler, counts, () => active),
    directory: { get: async () => cluster },
    etcdFor: () => ({
      prober: { probe: () => etcd.probe(clock.now()) },
      transport: { client: ({ endpoint }) => etcd.client(endpoint), close: async () => undefined },
      guard: () => guard,
    }),
    actuator: {
      name: 'recording',
      replace: async (request) => {
        actuator.push(request);
        return { action: 'deleted', detail: 'machine deleted' };
      },
    },
    clock,
    random: () => 0.5,
    log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    // The default policy snapshots before the removal: its journal writes are injection points too.
    snapshots: memorySnapshots(),
  };
  try {
    await driver.bus.publish({ source: 'etcd-remediator', detailType: 'MemberUnhealthy', detail: unhealthy('etcd-0') });
    let { idle } = await driver.run(deps);
    const open = await store.listIncidents({ state: 'open' });
    if (idle && open.length > 0 && fault?.mode === 'always') {
      // The part came back: the sweep (a scheduled rule on AWS) finds what the outage stranded.
      active = undefined;
      await sweepStalled(deps, { isArmed: () => driver.timers().length > 0, quietMs: 0, ignoreLeases: true });
      ({ idle } = await driver.run(deps));
    }
    const [incident] = await store.listIncidents();
    const journalSteps = incident ? (await store.journal(incident.incidentId)).map((e) => e.step) : [];
    return { ...(incident ? { incident } : {}), etcd: etcd.state, actuator, log: driver.log, idle, counts, journalSteps };
  } finally {
    await store.close();
    dir.remove();
  }
}

const terminal = ['RemediationCompleted', 'RemediationBlocked', 'RemediationFailed'];

/** What must hold whatever failed. */
function expectSafeEnd(run: Run, label: string): void {
  expect(run.idle, `${label}: the pipeline ran on without end`).toBe(true);
  if (!run.incident) {
    // No incident could be opened: the report is kept where a failed delivery goes (the on-failure
    // destination), for a redrive, and nothing was touched.
    expect(
      run.log.exhausted.map((e) => e.detailType),
      label,
    ).toContain('MemberUnhealthy');
    expect(run.etcd.removals, label).toEqual([]);
    return;
  }
  expect(run.incident.state, `${label}: left open (${JSON.stringify(run.log.exhausted)})`).not.toBe('open');
  // Never two removals, never two leader moves.
  expect(run.etcd.removals.length, label).toBeLessThanOrEqual(1);
  expect(run.etcd.moves, label).toBeLessThanOrEqual(1);
  // The final word was said, or is still owed in the outbox for the next reader to say.
  const { incidentId } = run.incident;
  const said = run.log.published.filter((e) => terminal.includes(e.detailType) && incidentIdOf(e) === incidentId);
  const owed = run.incident.outbox.filter((o) => o.kind === 'publish' && terminal.includes(o.event.detailType));
  expect(said.length + owed.length, `${label}: no terminal event`).toBeGreaterThan(0);
  if (run.incident.state === 'awaiting-replacement') {
    expect(run.etcd.removals, label).toEqual([id(0)]);
    // One request per incident: asked twice only when the write recording the first was lost,
    // and then with the same incident id, which the actuator's contract makes idempotent.
    expect(new Set(run.actuator.map((r) => r.incidentId)).size, label).toBe(1);
  } else {
    expect((run.incident.result as { reason?: string } | undefined)?.reason, `${label}: closed without a reason`).toMatch(/^[A-Z_]+$/);
  }
}

const baseline = await runPipeline();
/** Every (part, method, call) the clean run makes: each one fails in turn below. */
const callPoints = [...baseline.counts].flatMap(([key, n]) => {
  const [part, method] = key.split('.') as [Part, string];
  return Array.from({ length: n }, (_, i) => ({ part, method, at: i + 1 }));
});

const summary: Record<string, number> = {};
afterAll(() => {
  // Printed so a reader sees how wide the matrix was.
  console.log(`failure injection: ${callPoints.length} call points; ${JSON.stringify(summary)}`);
});

describe('the pipeline under injected failures (no recovery sweep)', () => {
  it('the clean run moves leadership off etcd-0, removes it once and asks the actuator once', () => {
    expect(baseline.incident?.state).toBe('awaiting-replacement');
    expect(baseline.etcd.moves).toBe(1);
    expect(baseline.etcd.removals).toEqual([id(0)]);
    expect(baseline.actuator).toHaveLength(1);
    expect(baseline.log.published.map((e) => e.detailType)).toContain('LeaderMoved');
    expect(baseline.log.published.map((e) => e.detailType)).toContain('RetryRequested');
    // Each event was delivered twice and did its work once.
    expect(baseline.log.published.filter((e) => e.detailType === 'RemediationCompleted')).toHaveLength(1);
    expect(baseline.log.exhausted).toEqual([]);
    expect(callPoints.length).toBeGreaterThan(50);
  });

  it('one failure at any call: every incident still ends remediated, with one removal', async () => {
    const wrong: string[] = [];
    for (const point of callPoints) {
      const label = `${point.part}.${point.method} call ${point.at} fails once`;
      const run = await runPipeline({ ...point, mode: 'once' });
      expectSafeEnd(run, label);
      const state = run.incident?.state ?? 'none';
      if (state !== 'awaiting-replacement') wrong.push(`${label}: ${state} ${JSON.stringify(run.incident?.result)}`);
      summary[`once:${state}`] = (summary[`once:${state}`] ?? 0) + 1;
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it('a part failing from any call on: the incident still ends, remediated or blocked with a reason, never twice', async () => {
    for (const point of callPoints) {
      const label = `${point.part}.${point.method} fails from call ${point.at} on`;
      const run = await runPipeline({ ...point, mode: 'always' });
      expectSafeEnd(run, label);
      const state = run.incident?.state ?? 'none';
      summary[`always:${state}`] = (summary[`always:${state}`] ?? 0) + 1;
    }
  }, 120_000);
});
