// Shared helpers for the lab scenarios: the application's own steps (probe-members, move-leader,
// schedule-retry, remediate) over a real etcd lab, with a Deps built for the lab the way the unit
// harness builds one on fakes. A scenario delivers the events the steps publish one at a time, each
// to the function the event catalogue routes it to, so it sees every decision move-leader makes and
// every etcd call that changes the cluster. Nothing here decides anything: the application does.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import {
  incidentIdOf,
  isTerminalEvent,
  makeEvent,
  routesOf,
  type DetailOf,
  type DetailTypesFor,
  type EventEnvelope,
  type FunctionName,
  type TerminalDetailType,
} from '../../../events/catalogue.ts';
import { parseEnvelope, parseEvent } from '../../../events/validate.ts';
import { createEtcd3Transport, createProber, directPaths } from '../../../functions/adapters/etcd/index.ts';
import { fileSnapshots } from '../../../functions/adapters/local/file-snapshots.ts';
import type { ClusterDeps } from '../../../functions/app/common/deps.ts';
import type { Log } from '../../../functions/ports/log.ts';
import { moveLeader } from '../../../functions/app/move/move-leader.ts';
import { deliverToProbeMembers, probeMembers } from '../../support/probe-members.ts';
import { maintain } from '../../../functions/app/maintenance/index.ts';
import { remediate } from '../../../functions/app/removal/remediate.ts';
import { scheduleRetry } from '../../../functions/app/incident/schedule-retry.ts';
import type { Decision } from '../../../functions/core/common/decision.ts';
import { parsePolicy, type Policy } from '../../../functions/core/policy/policy.ts';
import type { EtcdFailure, MemberId, MemberInfo, PathName, ProbeSample } from '../../../functions/core/common/types.ts';
import type { ClusterView } from '../../../functions/core/view/view.ts';
import { etcdOnlyActuator } from '../../../functions/adapters/etcd/etcd-only-actuator.ts';
import { type Clock } from '../../../functions/ports/clock.ts';
import { manualClock } from '../../support/manual-clock.ts';
import type { ClusterEntry } from '../../../functions/ports/cluster-directory.ts';
import { EtcdCallError, type EtcdTransport, type Prober } from '../../../functions/ports/etcd.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab, type LabMemberInfo } from '../../../infra/lab/lab.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { createEtcdGuards } from '../../../functions/adapters/etcd/etcd-guard.ts';

/** The lab's election timeout, a short call deadline and a short grace window keep scenarios fast. */
export const scenarioPolicy: Policy = parsePolicy({
  electionTimeoutMs: 500,
  callTimeoutMs: 1_000,
  graceMs: 1_500,
  pathOrder: ['direct'],
  backoff: { baseMs: 200, capMs: 1_000 },
  // etcd 3.4 refuses reconfiguration ("unhealthy cluster") for ~5 s after its members connect, and
  // every refusal remediate backs off from spends an attempt: a fresh lab must not exhaust them.
  maxAttempts: 60,
});

const CLUSTER_ID = 'lab';

/** The etcd calls that change a cluster, as the application sent them. */
export interface EtcdCalls {
  moveLeader: { endpoint: string; path: PathName; to: MemberId; outcome: 'moved' | EtcdFailure }[];
  /** Every MemberRemove sent, answered or not. */
  memberRemove: { endpoint: string; path: PathName; id: MemberId; failure?: EtcdFailure }[];
  /** The MemberRemove calls etcd accepted, with the member list it answered. */
  removed: { endpoint: string; path: PathName; id: MemberId; members: MemberInfo[] }[];
}

const failureOf = (error: unknown): EtcdFailure =>
  error instanceof EtcdCallError ? error.failure : { kind: 'other', message: error instanceof Error ? error.message : String(error) };

/** The real etcd3 transport, recording MoveLeader and MemberRemove as they are answered. */
function recordingTransport(inner: EtcdTransport, calls: EtcdCalls): EtcdTransport {
  return {
    client(target) {
      const client = inner.client(target);
      const { endpoint, path } = target;
      return {
        ...client,
        async moveLeader(to, deadlineMs) {
          try {
            await client.moveLeader(to, deadlineMs);
          } catch (error) {
            calls.moveLeader.push({ endpoint, path, to, outcome: failureOf(error) });
            throw error;
          }
          calls.moveLeader.push({ endpoint, path, to, outcome: 'moved' });
        },
        async memberRemove(id, deadlineMs) {
          let members: MemberInfo[];
          try {
            members = await client.memberRemove(id, deadlineMs);
          } catch (error) {
            calls.memberRemove.push({ endpoint, path, id, failure: failureOf(error) });
            throw error;
          }
          calls.memberRemove.push({ endpoint, path, id });
          calls.removed.push({ endpoint, path, id, members });
          return members;
        },
      };
    },
    close: () => inner.close(),
  };
}

const silent: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A timer the scheduler holds: the RetryDue it delivers, validated as the runtime's timers do. */
interface Timer {
  name: string;
  at: number;
  event: EventEnvelope;
}

/** A Deps for one cluster, and what the steps did through it. */
export interface AppParts {
  deps: ClusterDeps;
  cluster: ClusterEntry;
  /** Every event the steps published, validated as the bus validates them, in order. */
  events: EventEnvelope[];
  /** Timers pending, by name: scheduling a name again replaces it, as the scheduler port says. */
  timers: Map<string, Timer>;
  calls: EtcdCalls;
  /** Every probe sample, in order, as the prober returned it. */
  samples: ProbeSample[];
  close(): Promise<void>;
}

/**
 * The application's dependencies on a real SQLite store and a real etcd3 transport; the bus and the
 * scheduler record, and the driver below delivers what they hold. `prober` replaces the real one.
 */
function openApp(options: { endpoints: string[]; policy: Policy; clock: Clock; prober?: Prober }): AppParts {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scenario-'));
  const store = openSqliteStore({ path: path.join(dir, 'state.sqlite') });
  const inner = createEtcd3Transport();
  const calls: EtcdCalls = { moveLeader: [], memberRemove: [], removed: [] };
  const transport = recordingTransport(inner, calls);
  const samples: ProbeSample[] = [];
  const probing = options.prober ?? createProber(inner, directPaths);
  const prober: Prober = {
    async probe(request) {
      const sample = await probing.probe(request);
      samples.push(sample);
      return sample;
    },
  };
  const cluster: ClusterEntry = { clusterId: CLUSTER_ID, endpoints: options.endpoints, policy: options.policy };
  const guards = createEtcdGuards({ prefix: options.policy.guardPrefix, deadlineMs: options.policy.callTimeoutMs });
  const events: EventEnvelope[] = [];
  const timers = new Map<string, Timer>();
  const deps: ClusterDeps = {
    store,
    bus: {
      async publish(...published) {
        for (const envelope of published) {
          // The bus would keep an invalid event as a dead letter; here it fails the step and the test.
          const parsed = parseEnvelope(envelope);
          if (!parsed.ok) throw new Error(`published an invalid event: ${parsed.error.summary}`);
          events.push(parsed.event);
        }
      },
    },
    scheduler: {
      async schedule({ name, at, event }) {
        const parsed = parseEvent(event.detailType, event.detail);
        if (!parsed.ok) throw new Error(`scheduled an invalid event: ${parsed.error.summary}`);
        timers.set(name, { name, at, event: parsed.event });
      },
      async cancel(name) {
        timers.delete(name);
      },
    },
    directory: createStaticDirectory([cluster]),
    // The lock and removal record in the lab's own etcd, as every real access keeps them.
    etcdFor: () => ({ transport, prober, guard: guards.at }),
    actuator: etcdOnlyActuator,
    // Real snapshots of the lab, as every runtime takes them before a removal by default.
    snapshots: fileSnapshots(path.join(dir, 'snapshots')),
    clock: options.clock,
    random: () => 0.5,
    log: silent,
  };
  return {
    deps,
    cluster,
    events,
    timers,
    calls,
    samples,
    async close() {
      try {
        await store.close();
      } finally {
        try {
          guards.close();
          await inner.close();
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }
    },
  };
}

/**
 * The system clock, except that it stands still while move-leader runs: the planner's `now` is then
 * known to the test, as it is under the unit harness's manual clock.
 */
export class StepClock implements Clock {
  #standing: number | undefined;

  now(): number {
    return this.#standing ?? Date.now();
  }

  async standingStill<T>(work: () => Promise<T>): Promise<{ now: number; value: T }> {
    const now = Date.now();
    this.#standing = now;
    try {
      return { now, value: await work() };
    } finally {
      this.#standing = undefined;
    }
  }
}

/** One decision of move-leader. */
export interface Observation {
  /** The view it decided on: the one the MembersProbed it was given carries. */
  view: ClusterView;
  decision: Decision;
  /** The planner's `now`. */
  now: number;
  /** The incident as move-leader found it, and as it left it. */
  before: Incident;
  after: Incident;
}

export type Outcome = EventEnvelope<TerminalDetailType>;

/** The app on a lab. */
export interface LabApp extends AppParts {
  clock: StepClock;
  /** A driver for the incident a report of this member opens. */
  incident(memberName: string): IncidentRun;
  /** The probe sample a view was built from. */
  sampleOf(view: ClusterView): ProbeSample;
  /** The accepted MemberRemove calls of this member. */
  removals(id: MemberId): EtcdCalls['removed'];
}

export function openLabApp(lab: Lab, policy: Policy = scenarioPolicy): LabApp {
  const clock = new StepClock();
  const parts = openApp({ endpoints: lab.endpoints(), policy, clock });
  const app: LabApp = {
    ...parts,
    clock,
    incident: (memberName) => new IncidentRun(app, memberName),
    sampleOf(view) {
      const found = parts.samples.filter((s) => s.at === view.at && s.members.length === view.members.length);
      if (found.length !== 1) throw new Error(`${found.length} probe samples taken at ${view.at} match the view`);
      return found[0]!;
    },
    removals: (id) => parts.calls.removed.filter((c) => c.id === id),
  };
  return app;
}

const unhealthyReport = (memberName: string, now: number): DetailOf<'MemberUnhealthy'> => {
  const at = new Date(now).toISOString();
  const parsed = parseEvent('MemberUnhealthy', { clusterId: CLUSTER_ID, target: { memberName }, reason: 'scenario', source: 'scenario', observedAt: at, at });
  if (!parsed.ok || parsed.event.detailType !== 'MemberUnhealthy') throw new Error(`invalid report of ${memberName}`);
  return parsed.event.detail;
};

const describeDecision = (d: Decision | undefined): string => (d ? `${d.kind} ${d.reason}: ${d.message}` : 'none');

/** Each function's step in a scenario, for the events the catalogue routes to it; a result stops the delivery. */
type Steps<R> = { [F in FunctionName]: (event: EventEnvelope<DetailTypesFor<F>>) => Promise<R | undefined> };

/** Hands `event` to each function the catalogue routes it to, as the bus does, until one returns a result. */
async function deliver<R>(steps: Steps<R>, event: EventEnvelope): Promise<R | undefined> {
  for (const fn of routesOf(event.detailType)) {
    // The catalogue routes this detail type to `fn`; the mapped type cannot say so.
    const step = steps[fn] as (routed: EventEnvelope) => Promise<R | undefined>;
    const result = await step(event);
    if (result !== undefined) return result;
  }
  return undefined;
}

/**
 * Drives one incident through the four steps: each event a step publishes goes to the function the
 * catalogue routes it to, and a RetryDue is delivered once its timer is due, not before.
 */
export class IncidentRun {
  readonly memberName: string;
  readonly observations: Observation[] = [];
  outcome: Outcome | undefined;
  readonly #app: LabApp;
  #incidentId: string | undefined;
  #seen = 0;
  readonly #queue: EventEnvelope[] = [];

  constructor(app: LabApp, memberName: string) {
    this.#app = app;
    this.memberName = memberName;
  }

  get incidentId(): string {
    if (this.#incidentId === undefined) throw new Error(`no incident is open for ${this.memberName}`);
    return this.#incidentId;
  }

  /** Reports the member unhealthy to probe-members, and returns move-leader's first decision. */
  async open(timeoutMs = 15_000): Promise<Observation> {
    if (this.#incidentId !== undefined) throw new Error(`the incident of ${this.memberName} is open already`);
    const { deps } = this.#app;
    const opened = await probeMembers(deps, { detailType: 'MemberUnhealthy', detail: unhealthyReport(this.memberName, deps.clock.now()) });
    if (opened.kind !== 'probed') throw new Error(`reporting ${this.memberName} opened no incident (${opened.kind})`);
    this.#incidentId = opened.incident.incidentId;
    return this.next(timeoutMs);
  }

  /** Follows the last decision (a retry: schedule-retry, its RetryDue when due, a probe) to the next one. */
  async next(timeoutMs = 15_000): Promise<Observation> {
    const reached = await this.#advance(Date.now() + timeoutMs, false);
    if ('decision' in reached) return reached;
    throw new Error(
      `${this.memberName}: no further decision, the incident reached ${reached.detailType} after ${describeDecision(this.observations.at(-1)?.decision)}`,
    );
  }

  /** Opens the incident if need be, and follows it until a decision `done` accepts. */
  async observeUntil(done: (d: Decision) => boolean, what: string, options: { timeoutMs?: number } = {}): Promise<Observation> {
    const deadline = Date.now() + (options.timeoutMs ?? 15_000);
    let o = this.#incidentId === undefined ? await this.open(deadline - Date.now()) : await this.next(deadline - Date.now());
    while (!done(o.decision)) {
      if (Date.now() >= deadline) throw new Error(`timed out waiting for ${what}: last decision ${describeDecision(o.decision)}`);
      o = await this.next(deadline - Date.now());
    }
    return o;
  }

  /** Carries the incident to its end: remediate an approval, and follow every retry after it. */
  async finish(timeoutMs = 30_000): Promise<Outcome> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reached = await this.#advance(deadline, true);
      if ('decision' in reached) continue;
      if (reached.detailType === 'RemediationApproved') throw new Error('an approval was left unremediated');
      return reached;
    }
  }

  /** Delivers events and due timers until move-leader decides, the incident ends, or (unless carrying on) it is approved. */
  async #advance(deadline: number, carryOn: boolean): Promise<Observation | Outcome | EventEnvelope<'RemediationApproved'>> {
    const { deps } = this.#app;
    const steps: Steps<Observation | EventEnvelope<'RemediationApproved'>> = {
      'probe-members': async (event) => void (await deliverToProbeMembers(deps, event)),
      'move-leader': (event) =>
        event.detailType === 'MembersProbed' ? this.#decide(event.detail) : Promise.reject(new Error(`the scenarios deliver no ${event.detailType}`)),
      'schedule-retry': async (event) => void (await scheduleRetry(deps, event.detail)),
      remediate: async (event) => {
        if (event.detailType === 'MaintenanceDue') {
          await maintain(deps, event.detail);
          return undefined;
        }
        if (!carryOn) {
          this.#queue.unshift(event);
          return event;
        }
        await remediate(deps, event.detail);
        return undefined;
      },
    };
    for (;;) {
      const event = this.#nextEvent() ?? (await this.#dueTimer(deadline));
      if (isTerminalEvent(event)) {
        this.outcome = event;
        return event;
      }
      const reached = await deliver(steps, event);
      if (reached) return reached;
    }
  }

  async #decide(detail: DetailOf<'MembersProbed'>): Promise<Observation | undefined> {
    const { deps, clock } = this.#app;
    const before = await this.#incident();
    const { now, value: decision } = await clock.standingStill(() => moveLeader(deps, detail));
    if (!decision) return undefined;
    const observation = { view: detail.view, decision, now, before, after: await this.#incident() };
    this.observations.push(observation);
    return observation;
  }

  async #incident(): Promise<Incident> {
    const incident = await this.#app.deps.store.getIncident(this.incidentId);
    if (!incident) throw new Error(`incident ${this.incidentId} is not in the store`);
    return incident;
  }

  #nextEvent(): EventEnvelope | undefined {
    const { events } = this.#app;
    for (; this.#seen < events.length; this.#seen += 1) {
      const event = events[this.#seen]!;
      if (incidentIdOf(event) === this.#incidentId) this.#queue.push(event);
    }
    return this.#queue.shift();
  }

  /** Nothing left to deliver: the incident's earliest timer, once it is due. */
  async #dueTimer(deadline: number): Promise<EventEnvelope> {
    const { timers, clock } = this.#app;
    const [timer] = [...timers.values()].filter((t) => incidentIdOf(t.event) === this.#incidentId).sort((a, b) => a.at - b.at);
    const last = describeDecision(this.observations.at(-1)?.decision);
    if (!timer) throw new Error(`${this.memberName}: nothing to deliver and no timer pending (last decision ${last})`);
    if (timer.at > deadline) throw new Error(`${this.memberName}: the next retry is due after the deadline (last decision ${last})`);
    await waitFor(async () => (clock.now() >= timer.at ? true : undefined), {
      timeoutMs: Math.max(0, timer.at - Date.now()) + 1_000,
      intervalMs: 5,
      what: `timer ${timer.name}`,
    });
    timers.delete(timer.name);
    return timer.event;
  }
}

/** A probe replayed with its time changed. */
export interface ReplayStep {
  /** What the probe returns; the clock stands at its `at` while probe-members runs. */
  sample: ProbeSample;
  /** The clock while move-leader decides on it. */
  decideAt: number;
}

/**
 * The same steps on recorded probe samples under a manual clock, for what the application decides at
 * times a lab cannot wait for. Every decision but the last must be a retry, which is followed.
 */
export async function replayIncident(options: { memberName: string; endpoints: string[]; policy: Policy; steps: ReplayStep[] }): Promise<Decision[]> {
  const queue = options.steps.map((s) => s.sample);
  const clock = manualClock(options.steps[0]?.sample.at ?? 0);
  const prober: Prober = {
    probe: async () => {
      const next = queue.shift();
      if (!next) throw new Error('the replay ran out of samples');
      return next;
    },
  };
  const app = openApp({ endpoints: options.endpoints, policy: options.policy, clock, prober });
  let decideAt = 0;
  const steps: Steps<Decision> = {
    'probe-members': async (event) => void (await deliverToProbeMembers(app.deps, event)),
    'move-leader': async (event) => {
      if (event.detailType !== 'MembersProbed') throw new Error(`the scenarios deliver no ${event.detailType}`);
      clock.set(decideAt);
      const decision = await moveLeader(app.deps, event.detail);
      if (!decision) throw new Error('move-leader did nothing');
      return decision;
    },
    'schedule-retry': async (event) => void (await scheduleRetry(app.deps, event.detail)),
    remediate: async () => {
      throw new Error('a replay ends at a decision: nothing is remediated');
    },
  };
  let seen = 0;
  const nextPublished = (): EventEnvelope | undefined => (seen < app.events.length ? app.events[seen++] : undefined);
  /** Delivers `first`, then what the steps published since, in order, until move-leader decides. */
  const decideOn = async (first: EventEnvelope | undefined): Promise<Decision | undefined> => {
    for (let event = first; event; event = nextPublished()) {
      const decision = await deliver(steps, event);
      if (decision) return decision;
    }
    return undefined;
  };
  try {
    const decisions: Decision[] = [];
    for (const [i, step] of options.steps.entries()) {
      clock.set(step.sample.at);
      decideAt = step.decideAt;
      // What the last decision published (its RetryRequested) is delivered before its timer is taken.
      if (i > 0 && (await decideOn(nextPublished()))) throw new Error(`replay step ${i}: a decision before its probe`);
      const decision = await decideOn(
        i === 0 ? makeEvent('MemberUnhealthy', unhealthyReport(options.memberName, clock.now())) : dueRetry(app, i, step.sample.at),
      );
      if (!decision) throw new Error(`replay step ${i}: move-leader did not decide; published ${app.events.map((e) => e.detailType).join(', ')}`);
      decisions.push(decision);
      if (i < options.steps.length - 1 && decision.kind !== 'retry') throw new Error(`replay step ${i}: ${describeDecision(decision)}, not a retry to follow`);
    }
    return decisions;
  } finally {
    await app.close();
  }
}

/** The one timer pending, a RetryDue due by `at`, taken off the scheduler. */
function dueRetry(app: AppParts, step: number, at: number): EventEnvelope<'RetryDue'> {
  const [timer, ...more] = app.timers.values();
  if (!timer || more.length > 0) throw new Error(`replay step ${step}: ${app.timers.size} timers pending, expected one`);
  if (timer.at > at) throw new Error(`replay step ${step}: the retry is due at ${timer.at}, after the sample at ${at}`);
  app.timers.delete(timer.name);
  if (timer.event.detailType !== 'RetryDue') throw new Error(`replay step ${step}: a timer for ${timer.event.detailType}`);
  return timer.event;
}

export interface Scenario {
  lab: Lab;
  app: LabApp;
  /** Runs first at teardown, e.g. SIGCONT for a stopped member. */
  onTeardown: (cleanup: () => void | Promise<void>) => void;
}

/**
 * Registers teardown in the calling describe and returns a starter: each test gets its own lab and
 * app, and both are closed after it whatever happened.
 */
export function labPerTest(): (members: number, options?: { policy?: Policy }) => Promise<Scenario> {
  let current: { lab?: Lab; app?: LabApp; cleanups: (() => void | Promise<void>)[] } | undefined;
  afterEach(async () => {
    const open = current;
    current = undefined;
    if (!open) return;
    try {
      for (const cleanup of open.cleanups.reverse()) await cleanup();
    } finally {
      try {
        await open.app?.close();
      } finally {
        await open.lab?.down();
      }
    }
  });
  return async (members, options = {}) => {
    const open: NonNullable<typeof current> = { cleanups: [] };
    current = open;
    const policy = options.policy ?? scenarioPolicy;
    open.lab = await startLab({ members, electionTimeoutMs: policy.electionTimeoutMs });
    open.app = openLabApp(open.lab, policy);
    return { lab: open.lab, app: open.app, onTeardown: (cleanup) => void open.cleanups.push(cleanup) };
  };
}

/** The name of the lab member a client URL belongs to. */
export const memberAt = (lab: Lab, endpoint: string): string | undefined => lab.members.find((m) => m.clientUrl === endpoint)?.name;

/** Waits until the lab's ground-truth member list no longer has `id`. */
export async function waitUntilGone(lab: Lab, id: MemberId, timeoutMs = 10_000): Promise<LabMemberInfo[]> {
  return waitFor(
    async () => {
      const list = await lab.memberList();
      if (list.some((m) => m.id === id)) throw new Error(`${id} is still listed`);
      return list;
    },
    { timeoutMs, what: `member ${id} to leave the member list` },
  );
}
