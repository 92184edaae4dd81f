// The MachineHealthCheck side: each new EtcdRemediationRequest becomes a MemberUnhealthy for its
// Machine, reported to the embedded runtime or to a deployed stack's bus; the incident is followed
// in its store (and, locally, on the bus as it moves) and written back to the request's status; a
// request deleted before removal began withdraws its incident. The informer lists, then watches
// from the list's resourceVersion, and relists on 410 Gone; after a dropped watch it is started
// again from where it was.
import { CustomObjectsApi, makeInformer, type Informer, type KubeConfig } from '@kubernetes/client-node';
import { handleWhenResult, retry } from 'cockatiel';
import type { EventEnvelope } from '../../events/catalogue.ts';
import {
  REQUESTS_PATH,
  createRequestClient,
  isTerminalPhase,
  toRemediationRequest,
  type RemediationRequest,
  type RequestObject,
  type RequestStatus,
} from '../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { Log } from '../../functions/ports/log.ts';
import type { OutboxDeps } from '../../functions/app/step.ts';
import { withdrawIncident, type WithdrawOutcome } from '../../functions/app/withdraw.ts';
import { doublingBackoff } from '../../functions/lib/doubling-backoff.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';
import type { InProcessBus } from '../../functions/adapters/local/in-process-bus.ts';
import { describeKubeError } from '../../functions/adapters/kube/api-errors.ts';
import { statusOfEvent, statusOfIncident } from './request-status.ts';

/** Where requests are reported, and where their incidents are followed. */
export interface ReportSink extends OutboxDeps {
  /** Validates and reports a MemberUnhealthy; throws when it is refused. */
  submit(detail: unknown, source?: string): Promise<unknown>;
  /** Events as they happen, where the sink can give them (the embedded runtime's bus). */
  subscribe?: InProcessBus['subscribe'];
}

export interface RequestWatcherOptions {
  management: KubeConfig;
  runtime: ReportSink;
  /** How often the incidents of open requests are read again from the store (default 2 s). */
  followIntervalMs?: number;
  /** The cluster id in the directory for a request's Cluster API cluster. */
  clusterIdOf(request: RemediationRequest): string;
  log: Log;
  /** First delay before starting a failed watch again; doubled up to 30 s. */
  restartDelayMs?: number;
  /**
   * How long the incident of a deleted request is asked to stop while a step holds it (default
   * 5 min); past it the incident goes on, and the log says so.
   */
  withdrawWithinMs?: number;
  /**
   * A report that opened no incident in this long is reported again (default 60 s): a report whose
   * every delivery failed (a Secret unreadable for a while) is a dead letter, not a stranded request.
   */
  reportAgainMs?: number;
  /**
   * A request still there this long after its incident closed as recovered is reported again
   * (default 5 min): its MachineHealthCheck, which deletes a request once the Machine is healthy,
   * still finds it unhealthy, so its word stands over our probes'.
   */
  recheckRecoveredMs?: number;
}

export interface RequestWatcher {
  /** Resolves once the first list is in and every request in it is handled. */
  ready: Promise<void>;
  /** Why requests are not being watched now (no list in yet, or a dropped watch not back yet); undefined while they are. */
  notWatching(): string | undefined;
  stop(): Promise<void>;
}

interface Tracked {
  request: RemediationRequest;
  clusterId: string;
  incidentId?: string;
  /** When the request was last reported, while no incident is known for it. */
  reportedAt?: number;
  /** Incidents opened before this belong to an earlier report of the request. */
  since?: number;
  /** When its incident closed as recovered; the request is looked at again later. */
  recoveredAt?: number;
  /** Status writes, one after the other, so the last event's status is the one that stays. */
  writes: Promise<void>;
  terminal: boolean;
  /**
   * A status write failed: the next follow round writes the incident's whole status again, even
   * when the incident has not changed since, or is over (a failed terminal write is not the end).
   */
  unwritten?: boolean;
}

const keyOf = (r: Pick<RemediationRequest, 'namespace' | 'machineName'>): string => `${r.namespace}/${r.machineName}`;

/** A step may hold the incident for a moment: asked again after 100 ms, then twice as long, up to 2 s apart. */
const withdrawAgain = retry(
  handleWhenResult((outcome) => (outcome as WithdrawOutcome | undefined)?.kind === 'busy'),
  { maxAttempts: Infinity, backoff: doublingBackoff(100, 2_000) },
).dangerouslyUnref();

export function startRequestWatcher(options: RequestWatcherOptions): RequestWatcher {
  const { runtime, log } = options;
  const requests = createRequestClient(options.management.makeApiClient(CustomObjectsApi));
  const tracked = new Map<string, Tracked>();
  const byIncident = new Map<string, string>();
  let stopped = false;

  const write = (entry: Tracked, status: Omit<RequestStatus, 'updatedAt'>): Promise<void> => {
    entry.terminal ||= isTerminalPhase(status.phase);
    if (status.phase === 'Recovered') entry.recoveredAt ??= runtime.clock.now();
    entry.writes = entry.writes
      .then(async () => {
        if (stopped) return;
        const full: RequestStatus = { ...status, updatedAt: new Date(runtime.clock.now()).toISOString(), ...(entry.request.generation === undefined ? {} : { observedGeneration: entry.request.generation }) };
        if (!(await requests.writeStatus(entry.request, full))) log.info('request gone before its status was written', { request: keyOf(entry.request) });
      })
      .catch((error: unknown) => {
        entry.unwritten = true;
        log.warn('request status not written; written again from the incident on the next follow round', { request: keyOf(entry.request), error: String(error) });
      });
    return entry.writes;
  };

  const follow = (entry: Tracked, incident: Incident): Promise<void> => {
    entry.incidentId = incident.incidentId;
    byIncident.set(incident.incidentId, keyOf(entry.request));
    // The incident's whole status: it makes up for any write that failed before.
    entry.unwritten = false;
    return write(entry, statusOfIncident(incident));
  };

  /** The incident a report for this request opened, if one did at or after the request was made. */
  async function incidentFor(entry: Tracked): Promise<Incident | undefined> {
    const since = entry.since ?? (entry.request.createdAt ? Date.parse(entry.request.createdAt) - 1_000 : 0);
    const incidents = await runtime.store.listIncidents({ clusterId: entry.clusterId });
    return incidents
      .filter((i) => i.targetKey === `machineName=${entry.request.machineName}` && i.openedAt >= since)
      .sort((a, b) => b.openedAt - a.openedAt)[0];
  }

  async function handle(object: RequestObject): Promise<void> {
    const request = toRemediationRequest(object);
    if (!request) return;
    const key = keyOf(request);
    const known = tracked.get(key);
    if (known) {
      known.request = request;
      return;
    }
    if (!request.clusterName) {
      log.warn('request without a cluster-name label; left alone', { request: key });
      const orphan: Tracked = { request, clusterId: '', writes: Promise.resolve(), terminal: true };
      tracked.set(key, orphan);
      await write(orphan, { phase: 'Failed', reasonCode: 'INVALID_REQUEST', message: 'the request has no cluster.x-k8s.io/cluster-name label, so its cluster is unknown; MachineHealthCheck sets it' });
      return;
    }
    const entry: Tracked = { request, clusterId: options.clusterIdOf(request), writes: Promise.resolve(), terminal: isTerminalPhase(request.status?.phase) };
    // Recovered before a restart: looked at again from when it recovered.
    if (request.status?.phase === 'Recovered') entry.recoveredAt = Date.parse(request.status.completedAt ?? request.status.updatedAt ?? '') || runtime.clock.now();
    tracked.set(key, entry);
    if (entry.terminal) return;
    // Reported before (this watcher, or an earlier one that stopped before writing the status).
    const existing = request.status?.incidentId ? await runtime.store.getIncident(request.status.incidentId) : await incidentFor(entry);
    if (existing) return follow(entry, existing);
    if (!(await report(entry, 'reported; waiting for the incident to open'))) return;
    const opened = await waitFor(() => incidentFor(entry), { timeoutMs: 10_000, intervalMs: 50, what: `the incident of ${key}` }).catch(() => undefined);
    if (opened) await follow(entry, opened);
    else log.warn('no incident opened for the request yet; its events will find it', { request: key });
  }

  /** Reports the request; false when the report was refused (the request is then Failed). */
  async function report(entry: Tracked, said: string, observedNow = false): Promise<boolean> {
    const { request } = entry;
    entry.reportedAt = runtime.clock.now();
    await write(entry, { phase: 'Pending', message: said });
    const now = new Date(runtime.clock.now()).toISOString();
    const observedAt = observedNow ? now : (request.createdAt ?? now);
    const reason = request.reason ?? `MachineHealthCheck asked to remediate Machine ${request.machineName}`;
    try {
      await runtime.submit({ clusterId: entry.clusterId, target: { machineName: request.machineName }, reason, source: 'mhc', observedAt, at: new Date(runtime.clock.now()).toISOString() }, 'mhc');
      return true;
    } catch (error) {
      entry.reportedAt = undefined;
      await write(entry, { phase: 'Failed', reasonCode: 'INVALID_REQUEST', message: `the report was refused: ${error instanceof Error ? error.message : String(error)}` });
      return false;
    }
  }

  /** No incident since the last report, for longer than reportAgainMs: report it again. */
  function reportAgainIfStranded(entry: Tracked): void {
    const again = options.reportAgainMs ?? 60_000;
    if (entry.reportedAt === undefined || runtime.clock.now() - entry.reportedAt < again) return;
    const said = `no incident opened within ${Math.round(again / 1_000)} s of the report (its every delivery failed: the runtime's log and dead letters say why); reported again`;
    log.warn('no incident opened for the request; reporting it again', { request: keyOf(entry.request) });
    void report(entry, said).catch((error: unknown) => log.warn('request not reported again; tried again on a later round', { request: keyOf(entry.request), error: String(error) }));
  }

  /** Still here a while after it recovered: its MachineHealthCheck still wants the Machine remediated. True when reported again. */
  function recheckIfRecovered(entry: Tracked): boolean {
    const wait = options.recheckRecoveredMs ?? 300_000;
    const now = runtime.clock.now();
    if (entry.recoveredAt === undefined || now - entry.recoveredAt < wait) return false;
    const said = `the member recovered ${Math.round((now - entry.recoveredAt) / 1_000)} s ago, but the request is still here: its MachineHealthCheck still finds the Machine unhealthy, so it is reported again`;
    if (entry.incidentId) byIncident.delete(entry.incidentId);
    Object.assign(entry, { recoveredAt: undefined, terminal: false, unwritten: false, since: now - 1_000 });
    delete entry.incidentId;
    log.info('recovered request still present; reporting it again', { request: keyOf(entry.request) });
    void report(entry, said, true).catch((error: unknown) => log.warn('request not reported again; tried again on a later round', { request: keyOf(entry.request), error: String(error) }));
    return true;
  }

  async function withdraw(object: RequestObject): Promise<void> {
    const request = toRemediationRequest(object);
    if (!request) return;
    const key = keyOf(request);
    const entry = tracked.get(key);
    tracked.delete(key);
    if (!entry?.incidentId || entry.terminal) return;
    const { incidentId } = entry;
    const why = `EtcdRemediationRequest ${key} was deleted (its MachineHealthCheck withdrew it)`;
    const withinMs = options.withdrawWithinMs ?? 300_000;
    const until = runtime.clock.now() + withinMs;
    let tries = 0;
    // Undefined once the watcher stops or the time is up: then nobody asks any more.
    const outcome = await withdrawAgain.execute(async () => {
      if (stopped || runtime.clock.now() > until) return undefined;
      tries++;
      return withdrawIncident(runtime, incidentId, why);
    });
    if (outcome) log.info('request deleted', { request: key, incidentId, outcome: outcome.kind, ...(outcome.kind === 'too-late' ? { why: outcome.why } : {}) });
    else if (!stopped) log.warn('request deleted, but its incident was not withdrawn: a step held it all along; the incident goes on', { request: key, incidentId, withinMs, tries });
  }

  const onEvent = (event: EventEnvelope): void => {
    const incidentId = (event.detail as { incidentId?: string }).incidentId;
    const key = incidentId ? byIncident.get(incidentId) : undefined;
    const entry = key ? tracked.get(key) : undefined;
    const status = statusOfEvent(event);
    if (entry && status && !entry.terminal) void write(entry, { ...status, incidentId: incidentId! });
  };
  const unsubscribe = runtime.subscribe?.(onEvent) ?? (() => undefined);
  // The store is the truth: read the incident of every open request again, and say what changed.
  const seen = new Map<string, number>();
  const followed = setInterval(() => {
    for (const entry of tracked.values()) {
      if (entry.clusterId === '' || recheckIfRecovered(entry)) continue;
      if (entry.terminal && !entry.unwritten) continue;
      // Reported, but its incident was not open yet when last looked for (a remote stack is slower).
      if (!entry.incidentId) {
        incidentFor(entry).then(
          (incident) => {
            if (incident && !entry.incidentId) void follow(entry, incident);
            else if (!incident) reportAgainIfStranded(entry);
          },
          (error: unknown) => log.warn('incident not looked up; looked up again on the next round', { request: keyOf(entry.request), error: String(error) }),
        );
        continue;
      }
      const incidentId = entry.incidentId;
      runtime.store.getIncident(incidentId).then(
        (incident) => {
          if (!incident) return;
          const status = statusOfIncident(incident);
          if (entry.unwritten) {
            // A read from before the incident ended must not undo its outcome; a later round reads it.
            if (entry.terminal && !isTerminalPhase(status.phase)) return;
          } else if (seen.get(incidentId) === incident.version || entry.terminal) return;
          seen.set(incidentId, incident.version);
          // Cleared as the write is queued, so rounds do not pile up writes; a failure sets it again.
          entry.unwritten = false;
          void write(entry, status);
        },
        (error: unknown) => log.warn('incident not read; read again on the next round', { incidentId, error: String(error) }),
      );
    }
  }, options.followIntervalMs ?? 2_000);
  followed.unref();

  // The informer's start() resolves even when its list failed: a list that came back is the proof.
  let listed = false;
  let dropped: string | undefined;
  const list = () => requests.list().then((objects) => ((listed = true), objects));
  const informer: Informer<RequestObject> = makeInformer(options.management, REQUESTS_PATH, list);
  const handled = (promise: Promise<void>, what: string): void => {
    promise.catch((error: unknown) => log.error(`request ${what} not handled`, { error: String(error) }));
  };
  informer.on('add', (object) => handled(handle(object), 'add'));
  informer.on('update', (object) => handled(handle(object), 'update'));
  informer.on('delete', (object) => handled(withdraw(object), 'delete'));
  let restartDelay = options.restartDelayMs ?? 1_000;
  informer.on('error', (error) => {
    dropped = describeKubeError(error).split('\n')[0]!.slice(0, 300);
    if (stopped) return;
    log.warn('request watch dropped; starting it again', { error: String(error), inMs: restartDelay });
    const delay = restartDelay;
    restartDelay = Math.min(restartDelay * 2, 30_000);
    setTimeout(() => {
      if (!stopped) informer.start().catch((startError: unknown) => log.warn('request watch did not start', { error: String(startError) }));
    }, delay).unref();
  });
  informer.on('connect', () => {
    restartDelay = options.restartDelayMs ?? 1_000;
    dropped = undefined;
  });

  const ready = informer.start();
  return {
    ready,
    notWatching: () =>
      stopped ? 'stopped' : dropped !== undefined ? `the request watch dropped (${dropped}); starting it again` : !listed ? 'the first list of EtcdRemediationRequests is not in yet' : undefined,
    async stop() {
      stopped = true;
      clearInterval(followed);
      unsubscribe();
      await informer.stop();
      await Promise.all([...tracked.values()].map((entry) => entry.writes));
    },
  };
}
