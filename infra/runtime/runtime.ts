// The embedded default: the four functions' handlers on one machine, over an in-process bus,
// timers persisted in SQLite, and real etcd. No AWS.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Logger } from '@aws-lambda-powertools/logger';
import { isTerminalEvent, makeEvent, type DetailOf, type EventEnvelope, type FunctionName, type TerminalDetailType } from '../../events/catalogue.ts';
import { parseEvent, payloadOf } from '../../events/validate.ts';
import type { ClusterDeps } from '../../functions/app/common/index.ts';
import { lastDeliveryFailed, sweepStalled } from '../../functions/app/incident/index.ts';
import { type Actuator } from '../../functions/ports/actuator.ts';
import { etcdOnlyActuator } from '../../functions/adapters/etcd/etcd-only-actuator.ts';
import { type Clock } from '../../functions/ports/clock.ts';
import { systemClock } from '../../functions/lib/system-clock.ts';
import { UnknownClusterError, type ClusterDirectory } from '../../functions/ports/cluster-directory.ts';
import { toEventBridgeEvent } from '../../functions/lambda/eventbridge.ts';
import { meteredBus, meteredDeadLetters } from '../../functions/lambda/metered-bus.ts';
import type { PrometheusMetrics } from './prometheus-metrics.ts';
import { InvalidEventError, type LambdaHandler } from '../../functions/lambda/event-handler.ts';
import { settlesWithin } from '../../functions/lib/with-timeout.ts';
import { createEtcdAccess } from '../../functions/adapters/local/etcd-access.ts';
import { kubeOnDemand } from '../../functions/adapters/kube/kube-on-demand.ts';
import { fileSnapshots } from '../../functions/adapters/local/file-snapshots.ts';
import { busHandlers, type HandlerFactory } from './function-handlers.ts';
import { clusterRounds, hygieneCheck, learnerCheck, maintenanceCheck } from './cluster-rounds.ts';
import { failpointFrom, withFailpoint } from './failpoint.ts';
import { createInProcessBus, type InProcessBus } from '../../functions/adapters/local/in-process-bus.ts';
import { localContext } from './lambda-context.ts';
import { resumeScope, type ResumeOption } from './resume-scope.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../functions/adapters/local/sqlite-store.ts';
import { StateIoError } from '../../functions/adapters/local/state-file.ts';
import { createTimerScheduler, reportTimerError, type TimerScheduler } from '../../functions/adapters/local/timer-scheduler.ts';

export interface LocalRuntimeOptions {
  /** The SQLite file holding incidents, journal, locks, timers and dead letters. */
  statePath: string;
  directory: ClusterDirectory;
  actuator?: Actuator;
  clock?: Clock;
  random?: () => number;
  /** Powertools log level for the handlers; the CLI keeps them quiet and shows progress itself. */
  logLevel?: LogLevel;
  /** Called for a handler that failed on its last delivery. */
  onHandlerError?: (functionName: string, error: unknown) => void;
  /** As Lambda retries a failed asynchronous invocation: the delays before each redelivery. */
  redeliveryDelaysMs?: readonly number[];
  /** How often open incidents are checked for a stalled chain (nothing owed, running or scheduled). */
  sweepIntervalMs?: number;
  /** Where snapshots taken before a removal go (default: `snapshots/` beside the state file). */
  snapshotDir?: string;
  /** Replaces the etcd3 access, e.g. to observe every call a test makes through it. */
  etcdFor?: ClusterDeps['etcdFor'];
  /**
   * Which incidents open in the state file start() resumes: 'all' (the default, as `run` does), or
   * only those named (as `remediate` does). The others are left as they are, timers included.
   */
  resume?: ResumeOption;
  /** Told, in one line each, when the state file stops taking writes and when it takes them again (default: stderr). */
  onStateNotice?: (line: string) => void;
  /** How often a state file that refuses writes is tried again (default 5 s). */
  storeRetryDelayMs?: number;
  /** Checks each cluster of the directory for stuck learners every learnerCheckEveryMs, outside any incident (as `run` and `watch` do). */
  learnerChecks?: boolean;
  /** Checks each cluster whose policy enables leader hygiene every hygiene.checkEveryMs (as `run` and `watch` do). */
  hygieneChecks?: boolean;
  /** Checks each cluster whose policy enables maintenance every maintenance.checkEveryMs (as `run` and `watch` do). */
  maintenanceChecks?: boolean;
  /** Counts the outcome metrics and the dead letters as AWS does, for `run` and `watch`'s /metrics. */
  metrics?: boolean;
}

export type TerminalEvent = EventEnvelope<TerminalDetailType>;

export interface LocalRuntime {
  readonly store: SqliteIncidentStore;
  readonly bus: InProcessBus;
  readonly scheduler: TimerScheduler;
  /** The metric table's series, with `metrics` set. */
  readonly metrics?: PrometheusMetrics;
  /** Fires overdue timers and re-arms open incidents left without one by a crash (those `resume` names). */
  start(): Promise<void>;
  /** Resumes every open incident in scope with nothing owed, running or scheduled; returns how many. */
  sweep(): Promise<number>;
  /** Validates a MemberUnhealthy at the edge and puts it on the bus; throws InvalidEventError. */
  submit(detail: unknown, source?: string): Promise<EventEnvelope<'MemberUnhealthy'>>;
  /** Resolves with the incident's final event: completed, blocked or failed. */
  waitForOutcome(match: { clusterId: string; incidentId?: string }, timeoutMs: number): Promise<TerminalEvent>;
  /** Waits up to `drainTimeoutMs` (default 30 s) for handlers under way, then closes everything. */
  stop(options?: { drainTimeoutMs?: number }): Promise<void>;
}

/** Lambda waits about a minute, then two, between its retries; a local run need not wait as long. */
const DEFAULT_REDELIVERY_DELAYS_MS = [1_000, 5_000];

/** A full disk is freed by a person, in seconds or minutes: trying every few seconds is prompt, and costs nothing. */
const DEFAULT_STORE_RETRY_DELAY_MS = 5_000;

const seconds = (ms: number): string => (ms < 1_000 ? `${ms}ms` : `${Math.round(ms / 1_000)}s`);

/**
 * Says once that the state file refuses writes, and once that it takes them again; nothing before
 * start-up is through (a failed start says it itself). `onOutage` hears of every refusal.
 */
function stateNotices(say: (line: string) => void, retryMs: number, onOutage: () => void) {
  let running = false;
  let told = false;
  const unwritable = (error: StateIoError) => {
    if (!running) return;
    onOutage();
    if (told) return;
    told = true;
    say(`${error.message}; retrying every ${seconds(retryMs)}; open incidents go on once it takes writes again`);
  };
  return {
    unwritable,
    writable: (outageMs: number) => {
      if (!told) return;
      told = false;
      say(`state file takes writes again after ${seconds(outageMs)}; open incidents go on`);
    },
    /** Start-up is through: an outage from now on is retried, not fatal; one under way is said now. */
    running(outage: StateIoError | undefined) {
      running = true;
      if (outage) unwritable(outage);
    },
  };
}

export async function createLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const clock = options.clock ?? systemClock;
  const storeRetryDelayMs = options.storeRetryDelayMs ?? DEFAULT_STORE_RETRY_DELAY_MS;
  const notices = stateNotices(options.onStateNotice ?? ((line) => void process.stderr.write(`${line}\n`)), storeRetryDelayMs, () => sweepThroughOutage());
  const logLevel = options.logLevel ?? 'WARN';
  const log = new Logger({ serviceName: 'etcd-remediator', logLevel });
  const opened = openSqliteStore({ path: options.statePath, onOutage: notices });
  // prom-client is loaded by the services that serve it only.
  const metrics = options.metrics ? (await import('./prometheus-metrics.ts')).prometheusMetrics({ liveIncidents: () => liveIncidentsIn(opened) }) : undefined;
  const store = metrics ? meteredDeadLetters(opened, metrics.sink, log) : opened;
  // The Kubernetes client is loaded when the directory first hands out a cluster with kube access.
  const kube = kubeOnDemand(options.directory);
  const etcd = createEtcdAccess(kube.kubeEtcd, clock);
  const sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
  const scope = resumeScope(options.resume);

  // The bus and scheduler refer to each other through deps; both exist before any event flows.
  const deps = {} as ClusterDeps;
  const scheduler = createTimerScheduler({
    store: scope.timers(store),
    clock,
    storeRetryDelayMs,
    // A state file that refuses writes is said once, by the store's notice; not once per timer and try.
    onError: (error, timer) => {
      if (!(error instanceof StateIoError)) reportTimerError(error, timer);
    },
    fire: async (event) => {
      const parsed = parseEvent(event.detailType, event.detail);
      if (parsed.ok) return bus.publish(parsed.event);
      // Retrying would fail forever: keep it as a dead letter, and let the timer go.
      await store.putDeadLetter({
        receivedAt: clock.now(),
        source: 'timer',
        detailType: event.detailType,
        payload: JSON.stringify(event),
        error: parsed.error.summary,
      });
    },
  });

  // Each function gets its handler built once, as a Lambda cold start would, on first use.
  const invoke = (name: FunctionName, create: HandlerFactory) => {
    let handler: LambdaHandler<unknown> | undefined;
    return async (event: EventEnvelope) => {
      handler ??= create({ ...deps, log: new Logger({ serviceName: name, logLevel }) });
      await handler(toEventBridgeEvent(event), localContext(name));
    };
  };

  // Retrying cannot help these: an invalid event is a dead letter already, and a cluster this
  // runtime does not know (an incident left in a shared state file) would fail every time.
  const retryable = (error: unknown) => !(error instanceof InvalidEventError || error instanceof UnknownClusterError);
  const bus: InProcessBus = createInProcessBus({
    handlers: busHandlers(invoke),
    onDeadLetter: (dead) => {
      store
        .putDeadLetter({
          receivedAt: clock.now(),
          source: 'local bus',
          detailType: dead.error.detailType || 'unknown',
          payload: JSON.stringify(dead.event),
          error: dead.error.summary,
        })
        .catch((error: unknown) => log.error('dead letter lost', { error: String(error), summary: dead.error.summary }));
    },
    redeliveryDelaysMs: options.redeliveryDelaysMs ?? DEFAULT_REDELIVERY_DELAYS_MS,
    retryable,
    onError: (failure) => {
      // A state file that refuses writes fails every step alike; the store's notice said so once.
      if (!(failure.error instanceof StateIoError)) {
        options.onHandlerError?.(failure.functionName, failure.error);
        log.error('handler failed', { functionName: failure.functionName, error: String(failure.error) });
      }
      if (failure.functionName === 'subscriber' || !retryable(failure.error)) return;
      // Every delivery failed: resume the incident later, or block it saying why; never strand it.
      afterLastDelivery(failure.functionName, failure.event, failure.error).catch((error: unknown) =>
        log.error('a failed step left its incident as it was; the sweep will resume it', { functionName: failure.functionName, error: String(error) }),
      );
    },
  });

  Object.assign(deps, {
    // The functions' journal writes crash the process at ETCD_REMEDIATOR_FAILPOINT's step, if set.
    store: withFailpoint(store, failpointFrom()),
    // Counted as on AWS: each outcome once its outbox is cleared (metered-bus.ts).
    bus: metrics ? meteredBus(bus, { sink: metrics.sink, openedAt: async (id) => (await store.getIncident(id))?.openedAt, log }) : bus,
    scheduler,
    directory: kube.directory,
    etcdFor: options.etcdFor ?? etcd.etcdFor,
    // A cluster with Cluster API access gets its Machine replaced; any other, the given actuator.
    actuator: kube.actuator(options.actuator ?? etcdOnlyActuator),
    clock,
    random: options.random ?? Math.random,
    log,
    snapshots: fileSnapshots(options.snapshotDir ?? path.join(path.dirname(options.statePath), 'snapshots')),
  } satisfies ClusterDeps);

  /** Lambda's on-failure destination, here: the incident is resumed or blocked; a report that opened none is kept. */
  async function afterLastDelivery(functionName: FunctionName, event: EventEnvelope, error: unknown): Promise<void> {
    await lastDeliveryFailed(deps, functionName, event, error);
  }

  /** "incidentId/attempt" of every stored timer that will deliver a RetryDue. */
  async function armedAttempts(): Promise<Set<string>> {
    const armed = new Set<string>();
    for (const timer of await store.dueTimers(Number.MAX_SAFE_INTEGER)) {
      const detail = (timer.payload as { detail?: { incidentId?: unknown; attempt?: unknown } } | null)?.detail;
      if (typeof detail?.incidentId === 'string' && typeof detail.attempt === 'number') armed.add(`${detail.incidentId}/${detail.attempt}`);
    }
    return armed;
  }

  const sweep = async (quietMs: number, ignoreLeases = false): Promise<number> => {
    const armed = await armedAttempts();
    return sweepStalled({ ...deps, store: scope.incidents(deps.store) }, { isArmed: (i) => armed.has(`${i.incidentId}/${i.attempt}`), quietMs, ignoreLeases });
  };
  let sweeper: NodeJS.Timeout | undefined;
  const checks = [
    ...(options.learnerChecks ? [clusterRounds(deps, learnerCheck)] : []),
    ...(options.hygieneChecks ? [clusterRounds(deps, hygieneCheck)] : []),
    ...(options.maintenanceChecks ? [clusterRounds(deps, maintenanceCheck)] : []),
  ];
  let outageSweeper: NodeJS.Timeout | undefined;
  /**
   * A step the full disk cut off cannot record its failure either: its incident is left owing its
   * outbox, or with no timer and no event under way. Every store back-off, when no step of ours
   * runs or waits for a redelivery, a write probe tries the file and the sweep carries such
   * incidents on (their last write is at least a back-off old); once one sweep went through with
   * the file writable again, it stops.
   */
  function sweepThroughOutage(): void {
    if (outageSweeper) return;
    outageSweeper = setInterval(() => {
      if (bus.inFlight > 0) return;
      // With no incident to carry on nothing would write, and the outage (and /healthz's 503) would
      // outlast the full disk: one small write finds out, and ends it once it lands.
      if (store.outage !== undefined) {
        try {
          store.probeWrite();
        } catch {
          // Still refused: said once already, and tried again at the next back-off.
        }
      }
      const writable = store.outage === undefined;
      sweep(storeRetryDelayMs).then(
        () => {
          if (!writable) return;
          clearInterval(outageSweeper);
          outageSweeper = undefined;
        },
        // Still refused: said once already, and tried again at the next back-off.
        () => undefined,
      );
    }, storeRetryDelayMs);
    outageSweeper.unref();
  }
  const waiters = new Set<() => void>();
  /** Why a wait for an outcome ended without one, when the state file is the reason (reads still work on a full disk). */
  const whyNoOutcome = async (incidentId: string | undefined): Promise<string> => {
    const outage = store.outage;
    if (!outage) return '';
    const since = `: ${outage.error.message} since ${new Date(outage.since).toISOString()}`;
    const incident = incidentId === undefined ? undefined : await store.getIncident(incidentId).catch(() => undefined);
    return incident?.state === 'open' ? `${since}; incident ${incidentId} stays open in ${options.statePath}, and the next start resumes it` : since;
  };

  return {
    store,
    bus,
    scheduler,
    ...(metrics ? { metrics } : {}),
    async start() {
      await scope.fix(store);
      // At start-up nothing of this process runs yet: an open incident with no timer for its
      // current attempt was cut off by a crash, whatever its lease says. Swept before any timer
      // fires, so a retry that fires now is not resumed twice.
      await sweep(0, true);
      await scheduler.start();
      // While running, a chain can still stall (a failed step whose incident could not be
      // written): the sweep finds it once it has been quiet for two intervals.
      sweeper = setInterval(() => {
        sweep(2 * sweepIntervalMs).catch((error: unknown) => log.error('sweep failed', { error: String(error) }));
      }, sweepIntervalMs);
      sweeper.unref();
      for (const c of checks) c.start();
      notices.running(store.outage?.error);
    },
    sweep: () => sweep(0),
    async submit(detail, source = 'cli') {
      const parsed = parseEvent('MemberUnhealthy', detail);
      if (!parsed.ok) {
        const dead = await store.putDeadLetter({
          receivedAt: clock.now(),
          source,
          detailType: 'MemberUnhealthy',
          // Never throws (a bigint, a cycle): the refusal is kept whatever was submitted.
          payload: payloadOf(detail),
          error: parsed.error.summary,
        });
        throw new InvalidEventError(parsed.error.summary, dead.id);
      }
      const event = makeEvent('MemberUnhealthy', parsed.event.detail as DetailOf<'MemberUnhealthy'>);
      await bus.publish(event);
      return event;
    },
    async waitForOutcome(match, timeoutMs) {
      let end = (): void => undefined;
      const outcome = new Promise<TerminalEvent>((resolve, reject) => {
        const stopped = () => reject(new Error(`the runtime stopped before an outcome for cluster ${match.clusterId}`));
        const unsubscribe = bus.subscribe((event) => {
          if (!isTerminalEvent(event)) return;
          const d = event.detail;
          if (d.clusterId !== match.clusterId || (match.incidentId && d.incidentId !== match.incidentId)) return;
          resolve(event);
        });
        waiters.add(stopped);
        end = () => {
          unsubscribe();
          waiters.delete(stopped);
        };
      });
      try {
        if (await settlesWithin(timeoutMs, outcome)) return await outcome;
      } finally {
        end();
      }
      throw new Error(`no outcome for cluster ${match.clusterId} within ${timeoutMs} ms${await whyNoOutcome(match.incidentId)}`);
    },
    async stop({ drainTimeoutMs = 30_000 } = {}) {
      clearInterval(sweeper);
      clearInterval(outageSweeper);
      await Promise.all(checks.map((c) => c.stop()));
      await scheduler.stop();
      await bus.drain({ timeoutMs: drainTimeoutMs }).catch(() => undefined);
      bus.close();
      // Nothing will be published any more: a wait for an outcome ends now, not at its timeout.
      for (const stopped of [...waiters]) stopped();
      await etcd.close();
      await store.close();
    },
  };
}

export const newIncidentId = (): string => randomUUID();

/** The incidents the gauge counts: those open or awaiting their replacement (prometheus-metrics.ts says why only those). */
const liveIncidentsIn = async (store: SqliteIncidentStore) => [
  ...(await store.listIncidents({ state: 'open' })),
  ...(await store.listIncidents({ state: 'awaiting-replacement' })),
];
