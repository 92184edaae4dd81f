// The embedded default: the four functions' handlers on one machine, over an in-process bus,
// timers persisted in SQLite, and real etcd. No AWS.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Logger } from '@aws-lambda-powertools/logger';
import { makeEvent, terminalDetailTypes, type DetailOf, type EventEnvelope, type FunctionName } from '../../events/catalogue.ts';
import { parseEvent } from '../../events/validate.ts';
import type { Deps } from '../../functions/app/deps.ts';
import { createMoveLeaderHandler } from '../../functions/move-leader/handler.ts';
import { etcdOnlyActuator, type Actuator } from '../../functions/ports/actuator.ts';
import { systemClock, type Clock } from '../../functions/ports/clock.ts';
import type { ClusterDirectory } from '../../functions/ports/cluster-directory.ts';
import { createProbeMembersHandler } from '../../functions/probe-members/handler.ts';
import { createRemediateHandler } from '../../functions/remediate/handler.ts';
import { createScheduleRetryHandler } from '../../functions/schedule-retry/handler.ts';
import { toEventBridgeEvent } from '../../functions/shared/eventbridge.ts';
import { InvalidEventError, type LambdaHandler } from '../../functions/shared/event-handler.ts';
import { createEtcdAccess } from './etcd-access.ts';
import { fileSnapshots } from './file-snapshots.ts';
import { createInProcessBus, type InProcessBus } from './in-process-bus.ts';
import { localContext } from './lambda-context.ts';
import { openSqliteStore, type SqliteIncidentStore } from './sqlite-store.ts';
import { createTimerScheduler, type TimerScheduler } from './timer-scheduler.ts';

export interface LocalRuntimeOptions {
  /** The SQLite file holding incidents, journal, locks, timers and dead letters. */
  statePath: string;
  directory: ClusterDirectory;
  actuator?: Actuator;
  clock?: Clock;
  random?: () => number;
  /** Powertools log level for the handlers; the CLI keeps them quiet and shows progress itself. */
  logLevel?: LogLevel;
  /** Called for a handler that threw; the incident is re-probed after `recoverAfterMs`. */
  onHandlerError?: (functionName: string, error: unknown) => void;
  recoverAfterMs?: number;
  /** Where snapshots taken before a removal go (default: `snapshots/` beside the state file). */
  snapshotDir?: string;
  /** Replaces the etcd3 access, e.g. to observe every call a test makes through it. */
  etcdFor?: Deps['etcdFor'];
}

export type TerminalEvent = EventEnvelope<(typeof terminalDetailTypes)[number]>;

export interface LocalRuntime {
  readonly store: SqliteIncidentStore;
  readonly bus: InProcessBus;
  readonly scheduler: TimerScheduler;
  /** Fires overdue timers and re-arms open incidents left without one by a crash. */
  start(): Promise<void>;
  /** Validates a MemberUnhealthy at the edge and puts it on the bus; throws InvalidEventError. */
  submit(detail: unknown, source?: string): Promise<EventEnvelope<'MemberUnhealthy'>>;
  /** Resolves with the incident's final event: completed, blocked or failed. */
  waitForOutcome(match: { clusterId: string; incidentId?: string }, timeoutMs: number): Promise<TerminalEvent>;
  /** Waits up to `drainTimeoutMs` (default 30 s) for handlers under way, then closes everything. */
  stop(options?: { drainTimeoutMs?: number }): Promise<void>;
}

const isTerminal = (e: EventEnvelope): e is TerminalEvent =>
  (terminalDetailTypes as readonly string[]).includes(e.detailType) && e.detailType !== 'LeaderMoved';

export async function createLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const clock = options.clock ?? systemClock;
  const store = openSqliteStore({ path: options.statePath });
  const etcd = createEtcdAccess();
  const logLevel = options.logLevel ?? 'WARN';
  const recoverAfterMs = options.recoverAfterMs ?? 5_000;
  const log = new Logger({ serviceName: 'etcd-remediator', logLevel });

  // The bus and scheduler refer to each other through deps; both exist before any event flows.
  const deps = {} as Deps & { logger?: Logger };
  const scheduler = createTimerScheduler({
    store,
    clock,
    fire: async (event) => {
      const parsed = parseEvent(event.detailType, event.detail);
      if (!parsed.ok) throw new Error(`scheduled event is invalid: ${parsed.error.summary}`);
      await bus.publish(parsed.event);
    },
  });

  // Each function gets its handler built once, as a Lambda cold start would, on first use.
  const invoke = (name: FunctionName, create: (deps: Deps & { logger: Logger }) => LambdaHandler<unknown>) => {
    let handler: LambdaHandler<unknown> | undefined;
    return async (event: EventEnvelope) => {
      handler ??= create({ ...deps, logger: new Logger({ serviceName: name, logLevel }) });
      await handler(toEventBridgeEvent(event), localContext(name));
    };
  };

  const bus: InProcessBus = createInProcessBus({
    handlers: {
      'probe-members': invoke('probe-members', createProbeMembersHandler),
      'move-leader': invoke('move-leader', createMoveLeaderHandler),
      'schedule-retry': invoke('schedule-retry', createScheduleRetryHandler),
      remediate: invoke('remediate', createRemediateHandler),
    },
    onDeadLetter: (dead) => {
      void store.putDeadLetter({
        receivedAt: clock.now(),
        source: 'local bus',
        detailType: dead.error.detailType ?? 'unknown',
        payload: JSON.stringify(dead.event),
        error: dead.error.summary,
      });
    },
    onError: (failure) => {
      options.onHandlerError?.(failure.functionName, failure.error);
      log.error('handler failed', { functionName: failure.functionName, error: String(failure.error) });
      if (failure.error instanceof InvalidEventError) return;
      void recover(failure.event);
    },
  });

  Object.assign(deps, {
    store,
    bus,
    scheduler,
    directory: options.directory,
    etcdFor: options.etcdFor ?? etcd.etcdFor,
    actuator: options.actuator ?? etcdOnlyActuator,
    clock,
    random: options.random ?? Math.random,
    log,
    snapshots: fileSnapshots(options.snapshotDir ?? path.join(path.dirname(options.statePath), 'snapshots')),
  } satisfies Deps);

  /** Re-probe an open incident later: Lambda would retry the invocation; we retry the incident. */
  async function recover(event: EventEnvelope): Promise<void> {
    const incidentId = 'incidentId' in event.detail ? event.detail.incidentId : undefined;
    const incident = incidentId ? await store.getIncident(incidentId) : undefined;
    if (!incident || incident.state !== 'open') return;
    await scheduleResume(incident.incidentId, incident.clusterId, incident.attempt, clock.now() + recoverAfterMs);
  }

  const scheduleResume = (incidentId: string, clusterId: string, attempt: number, at: number) =>
    scheduler.schedule({
      name: `${incidentId}-resume-${attempt}`,
      at,
      event: {
        detailType: 'RetryDue',
        detail: { incidentId, clusterId, attempt, at: new Date(at).toISOString(), reason: 'RUNTIME_RESUMED' },
      },
    });

  return {
    store,
    bus,
    scheduler,
    async start() {
      await scheduler.start();
      // An open incident with no timer was cut off mid-step by a crash: resume it now.
      const pending = new Set((await store.dueTimers(Number.MAX_SAFE_INTEGER)).map((t) => t.name.replace(/-(retry|resume)-\d+$/, '')));
      for (const incident of await store.listIncidents({ state: 'open' })) {
        if (!pending.has(incident.incidentId)) await scheduleResume(incident.incidentId, incident.clusterId, incident.attempt, clock.now());
      }
    },
    async submit(detail, source = 'cli') {
      const parsed = parseEvent('MemberUnhealthy', detail);
      if (!parsed.ok) {
        const dead = await store.putDeadLetter({
          receivedAt: clock.now(),
          source,
          detailType: 'MemberUnhealthy',
          payload: JSON.stringify(detail),
          error: parsed.error.summary,
        });
        throw new InvalidEventError(parsed.error.summary, dead.id);
      }
      const event = makeEvent('MemberUnhealthy', parsed.event.detail as DetailOf<'MemberUnhealthy'>);
      await bus.publish(event);
      return event;
    },
    waitForOutcome(match, timeoutMs) {
      return new Promise<TerminalEvent>((resolve, reject) => {
        const timer = setTimeout(() => {
          unsubscribe();
          reject(new Error(`no outcome for cluster ${match.clusterId} within ${timeoutMs} ms`));
        }, timeoutMs);
        const unsubscribe = bus.subscribe((event) => {
          if (!isTerminal(event)) return;
          const d = event.detail;
          if (d.clusterId !== match.clusterId || (match.incidentId && d.incidentId !== match.incidentId)) return;
          clearTimeout(timer);
          unsubscribe();
          resolve(event);
        });
      });
    },
    async stop({ drainTimeoutMs = 30_000 } = {}) {
      await scheduler.stop();
      await bus.drain({ timeoutMs: drainTimeoutMs }).catch(() => undefined);
      await etcd.close();
      await store.close();
    },
  };
}

export const newIncidentId = (): string => randomUUID();
