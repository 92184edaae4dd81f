// The MachineHealthCheck side: each new EtcdRemediationRequest becomes a MemberUnhealthy for its
// Machine, reported to the embedded runtime or to a deployed stack's bus; the incident is followed
// by level, as Cluster API's controllers reconcile: each round (and, locally, each of its events on
// the bus) reads it from its store, recomputes the request's whole status from it, and writes only
// what differs from what the request shows; a request deleted before removal began withdraws its
// incident. A request whose member another
// incident holds follows that one. Nothing is reported while Cluster API has stopped acting on the
// Machine (its Cluster, MachineHealthCheck or Machine paused, or the MHC short-circuited): the
// status says so, each follow round looks again, and an incident of the request that has not begun
// removing stops then. The informer lists, then watches from the list's resourceVersion, and
// relists on 410 Gone; after a dropped watch it is started again from where it was. Each request
// carries our finalizer while it stands, so one the garbage collector deletes with its Machine is
// followed to its outcome before it goes; a deletion is judged by the Machine (there and healthy:
// MHC withdrew it; gone or deleting: collected). Each status is also the Machine's
// ExternallyRemediated condition. MachineHealthChecks that compete with ours for the same Machines
// are looked for at start and every few minutes (coexistence-scan.ts). Its parts are in
// request-watcher/: the level a status is compared at, its writes, deletions, the release of a
// request a person must see, and the look at what holds a replacement.
import os from 'node:os';
import { CoreV1Api, CustomObjectsApi, makeInformer, type Informer } from '@kubernetes/client-node';
import type { EventEnvelope } from '../../events/catalogue.ts';
import { createRemediationGate, type Gate, type GateLook } from '../../functions/adapters/kube/cluster-api/remediation-gate.ts';
import { createEventRecorder, machineReference } from '../../functions/adapters/kube/cluster-api/object-events.ts';
import { truncateNote, type ObjectEventSaid } from '../../functions/core/kubernetes/index.ts';
import { kubeEventOf, kubeEventOfIncident } from './decision-events.ts';
import { startCoexistenceScan } from './coexistence-scan.ts';
import {
  REQUESTS_PATH,
  createRequestClient,
  toRemediationRequest,
  type RequestObject,
  type RequestStatus,
} from '../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { withdrawIncident } from '../../functions/app/incident/index.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';
import type { JournalEntry } from '../../functions/core/incident/index.ts';
import { describeKubeError } from '../../functions/adapters/kube/api-errors.ts';
import { incidentOfRequest, isOwnIncident } from './request-incident.ts';
import { incidentsSince } from './request-history.ts';
import { goesOnAfter, statusOfIncident } from './request-status.ts';
import type { RequestWatcher, RequestWatcherOptions } from './request-watcher/options.ts';
import { BEFORE_REPORT, said, sameStatus, shownOf } from './request-watcher/status-level.ts';
import { createStatusWrites } from './request-watcher/status-writes.ts';
import { createReplacementLook } from './request-watcher/replacement-look.ts';
import { createRelease } from './request-watcher/release.ts';
import { createDeletion } from './request-watcher/deletion.ts';
import { describeInterval, ended, keyOf, type Said, type Tracked, type WatcherContext } from './request-watcher/tracked.ts';

export type { ReportSink, RequestWatcher, RequestWatcherOptions } from './request-watcher/options.ts';

export function startRequestWatcher(options: RequestWatcherOptions): RequestWatcher {
  const { runtime, log } = options;
  const customObjects = options.management.makeApiClient(CustomObjectsApi);
  const requests = createRequestClient(customObjects);
  const gates = createRemediationGate(customObjects, options.clusterApiVersion);
  const machineApi = options.clusterApiVersion ?? 'v1beta1';
  const recorder = createEventRecorder({
    core: options.management.makeApiClient(CoreV1Api),
    log,
    clock: runtime.clock,
    instance: (options.eventInstance ?? os.hostname()).slice(0, 128),
  });
  const coexistence = startCoexistenceScan({ customObjects, recorder, log, version: machineApi, everyMs: options.coexistenceScanMs });
  const followIntervalMs = options.followIntervalMs ?? 2_000;
  const tracked = new Map<string, Tracked>();
  /** The requests following each incident, by key. */
  const byIncident = new Map<string, Set<string>>();
  let stopped = false;
  const ctx: WatcherContext = { options, runtime, log, customObjects, requests, machineApi, isStopped: () => stopped, tell };
  const write = createStatusWrites(ctx, (entry) => release.releaseIfEnded(entry));
  const lookAtReplacement = createReplacementLook(ctx);
  const release = createRelease(ctx, { detach, reportIfAllowed, followSoon });
  const { settleHold, deletionCause, withdrawIncidentOf } = createDeletion(ctx);

  /** Reconciles of one request run one after the other. */
  function inTurn(entry: Tracked, reconcile: () => Promise<void>): Promise<void> {
    const turn = entry.turn.then(reconcile);
    entry.turn = turn.catch(() => undefined);
    return turn;
  }

  /** The incident's journal, read again only when the incident has changed. */
  async function journalOf(entry: Tracked, incident: Incident): Promise<JournalEntry[]> {
    const read = entry.journalRead;
    if (read?.incidentId === incident.incidentId && read.version === incident.version) return read.journal;
    const journal = await runtime.store.journal(incident.incidentId);
    entry.journalRead = { incidentId: incident.incidentId, version: incident.version, journal };
    return journal;
  }

  /** A decision as a Kubernetes Event on the request's Machine; in the background, never failing the request. */
  function tell(entry: Tracked, said: ObjectEventSaid): void {
    entry.machine ??= machineReference(customObjects, entry.request, machineApi);
    void entry.machine.then((machine) => recorder.record(machine, said));
  }

  function detach(entry: Tracked): void {
    if (entry.incidentId) byIncident.get(entry.incidentId)?.delete(keyOf(entry.request));
    delete entry.incidentId;
    delete entry.holder;
  }

  function attach(entry: Tracked, incident: Incident): void {
    if (entry.incidentId !== incident.incidentId) detach(entry);
    entry.incidentId = incident.incidentId;
    if (isOwnIncident(entry.request.machineName, incident)) delete entry.holder;
    else entry.holder = { incidentId: incident.incidentId, target: incident.target };
    const keys = byIncident.get(incident.incidentId) ?? new Set<string>();
    byIncident.set(incident.incidentId, keys.add(keyOf(entry.request)));
  }

  /**
   * Follows `incident`: the request's whole status recomputed from it, written where it differs;
   * or, when it ended without ending the request, goes on: in the incident that holds the member,
   * or held until Cluster API allows it again.
   */
  async function follow(entry: Tracked, incident: Incident, depth = 0): Promise<void> {
    const after = goesOnAfter(incident);
    if (after?.kind === 'when-allowed') {
      detach(entry);
      Object.assign(entry, { held: true, since: runtime.clock.now() });
      return void (await write(entry, { ...statusOfIncident(incident), phase: 'Pending' }, ['completedAt', 'leaderMove']));
    }
    if (after?.kind === 'in-holder') {
      const holder = after.holderId && depth < 3 ? await runtime.store.getIncident(after.holderId) : undefined;
      if (holder) return follow(entry, holder, depth + 1);
      // Not in this state: nothing here goes on with the request, so it is reported again later.
      detach(entry);
      Object.assign(entry, { reportedAt: runtime.clock.now(), since: runtime.clock.now() });
      log.warn('request reported as a duplicate of an incident this state does not hold; reported again later', {
        request: keyOf(entry.request),
        holder: after.holderId,
      });
      return void (await write(entry, { ...statusOfIncident(incident), phase: 'Pending' }, ['completedAt', 'leaderMove']));
    }
    attach(entry, incident);
    if (!runtime.subscribe) tellDecision(entry, incident);
    await write(entry, said(entry, statusOfIncident(incident, await journalOf(entry, incident))), ['leaderMove']);
  }

  /** Without the bus's events (a deployed stack), each new last decision read from the store is told once. */
  function tellDecision(entry: Tracked, incident: Incident): void {
    const told = kubeEventOfIncident(incident);
    const key = told && JSON.stringify([incident.incidentId, incident.state, told.reason, told.note]);
    if (!told || key === entry.saidDecision) return;
    entry.saidDecision = key;
    tell(entry, told);
  }

  /** The incident a report for this request opened at or after it was made, or (once reported) the one its report joined. */
  async function incidentFor(entry: Tracked, holders = true): Promise<Incident | undefined> {
    const since = entry.since ?? (entry.request.createdAt ? Date.parse(entry.request.createdAt) - 1_000 : 0);
    return incidentOfRequest(await incidentsSince(runtime.store, entry.clusterId, since), entry.request.machineName, since, holders);
  }

  async function handle(object: RequestObject): Promise<void> {
    const request = toRemediationRequest(object);
    if (!request) return;
    const key = keyOf(request);
    const known = tracked.get(key);
    if (known) {
      known.request = request;
      // What the API server shows is the level compared with: a status someone else changed is
      // written back on the next round (the echo of a write of ours is the status it wrote).
      const observed = shownOf(request.status);
      if (!(observed && known.shown ? sameStatus(observed, known.shown) : observed === known.shown)) known.shown = observed;
      return settleHold(known);
    }
    if (!request.clusterName) {
      log.warn('request without a cluster-name label; left alone', { request: key });
      const orphan: Tracked = { request, clusterId: '', writes: Promise.resolve(), turn: Promise.resolve(), conditions: request.status?.conditions ?? [] };
      tracked.set(key, orphan);
      await write(orphan, {
        phase: 'Failed',
        reasonCode: 'INVALID_REQUEST',
        message: 'the request has no cluster.x-k8s.io/cluster-name label, so its cluster is unknown; MachineHealthCheck sets it',
      });
      return;
    }
    const entry: Tracked = {
      request,
      clusterId: options.clusterIdOf(request),
      writes: Promise.resolve(),
      turn: Promise.resolve(),
      shown: shownOf(request.status),
      conditions: request.status?.conditions ?? [],
    };
    // Recovered before a restart: looked at again from when it recovered.
    if (request.status?.phase === 'Recovered')
      entry.recoveredAt = Date.parse(request.status.completedAt ?? request.status.updatedAt ?? '') || runtime.clock.now();
    tracked.set(key, entry);
    await settleHold(entry);
    if (ended(entry) || entry.deletion) return;
    // Reported before (this watcher, or an earlier one that stopped before writing the status). An
    // incident of another report holding the member is joined by reporting, so it records MHC's word.
    const existing = request.status?.incidentId ? await runtime.store.getIncident(request.status.incidentId) : await incidentFor(entry, false);
    if (existing) return follow(entry, existing);
    if (!(await reportIfAllowed(entry, gates.look(), 'reported; waiting for the incident to open'))) return;
    const opened = await waitFor(() => incidentFor(entry), { timeoutMs: 10_000, intervalMs: 50, what: `the incident of ${key}` }).catch(() => undefined);
    if (opened && !entry.incidentId) await follow(entry, opened);
    else if (!opened) log.warn('no incident opened for the request yet; its events will find it', { request: key });
  }

  /** Reports the request; false when the report was refused (the request is then Failed). */
  async function report(entry: Tracked, said: string, observedNow = false): Promise<boolean> {
    const { request } = entry;
    entry.reportedAt = runtime.clock.now();
    await write(entry, { phase: 'Pending', message: said }, BEFORE_REPORT);
    const now = new Date(runtime.clock.now()).toISOString();
    const observedAt = observedNow ? now : (request.createdAt ?? now);
    const reason = request.reason ?? `MachineHealthCheck asked to remediate Machine ${request.machineName}`;
    try {
      await runtime.submit(
        {
          clusterId: entry.clusterId,
          target: { machineName: request.machineName },
          reason,
          source: 'mhc',
          observedAt,
          at: new Date(runtime.clock.now()).toISOString(),
        },
        'mhc',
      );
      return true;
    } catch (error) {
      entry.reportedAt = undefined;
      await write(entry, {
        phase: 'Failed',
        reasonCode: 'INVALID_REQUEST',
        message: `the report was refused: ${error instanceof Error ? error.message : String(error)}`,
      });
      return false;
    }
  }

  /** Reports the request when Cluster API lets its Machine be remediated now; otherwise holds it. */
  async function reportIfAllowed(entry: Tracked, look: GateLook, words: string, observedNow = false): Promise<boolean> {
    const gate = await look(entry.request);
    if (gate.kind !== 'allowed') {
      await hold(entry, gate);
      return false;
    }
    entry.held = false;
    return report(entry, words, observedNow);
  }

  /** Not reported now: the status says why, written again only when that changes. */
  async function hold(entry: Tracked, gate: Exclude<Gate, { kind: 'allowed' }>): Promise<void> {
    entry.held = true;
    const status: Said =
      gate.kind === 'held'
        ? {
            phase: 'Pending',
            reasonCode: gate.hold.reason,
            message: `${gate.hold.message}. The request is not reported; it is reported once that changes (looked at every ${describeInterval(followIntervalMs)}).`,
          }
        : {
            phase: 'Pending',
            message: `${gate.message}, so whether Cluster API lets this Machine be remediated now is unknown: the request is not reported until that reads (looked at every ${describeInterval(followIntervalMs)}).`,
          };
    // A hold that goes on writes nothing, and is said (as an Event, in the log) only when it changes.
    const clear: (keyof RequestStatus)[] = gate.kind === 'held' ? ['completedAt', 'leaderMove'] : ['reasonCode', 'completedAt', 'leaderMove'];
    if (!(await write(entry, status, clear))) return;
    if (gate.kind === 'held') tell(entry, { reason: gate.hold.reason, note: truncateNote(status.message!), type: 'Warning', action: 'Hold' });
    log.info('request held: Cluster API does not let its Machine be remediated now, or could not be read', {
      request: keyOf(entry.request),
      said: status.message,
    });
  }

  /** No incident since the last report, for longer than reportAgainMs: report it again. */
  async function reportAgainIfStranded(entry: Tracked, look: GateLook): Promise<void> {
    const again = options.reportAgainMs ?? 60_000;
    if (entry.reportedAt === undefined || runtime.clock.now() - entry.reportedAt < again) return;
    const words = `no incident opened within ${Math.round(again / 1_000)} s of the report (its every delivery failed: the runtime's log and dead letters say why); reported again`;
    log.warn('no incident opened for the request; reporting it again', { request: keyOf(entry.request) });
    if (await reportIfAllowed(entry, look, words)) followSoon(entry);
  }

  /** Still here a while after it recovered: its MachineHealthCheck still wants the Machine remediated. */
  const recheckDue = (entry: Tracked): boolean =>
    entry.recoveredAt !== undefined && runtime.clock.now() - entry.recoveredAt >= (options.recheckRecoveredMs ?? 300_000);

  async function recheck(entry: Tracked, look: GateLook): Promise<void> {
    const now = runtime.clock.now();
    const words = `the member recovered ${Math.round((now - entry.recoveredAt!) / 1_000)} s ago, but the request is still here: its MachineHealthCheck still finds the Machine unhealthy, so it is reported again`;
    detach(entry);
    Object.assign(entry, { recoveredAt: undefined, since: now - 1_000 });
    log.info('recovered request still present; reporting it again', { request: keyOf(entry.request) });
    if (await reportIfAllowed(entry, look, words, true)) followSoon(entry);
  }

  /** Held: reported once Cluster API lets its Machine be remediated again. */
  async function lookAgain(entry: Tracked, look: GateLook): Promise<void> {
    if (await reportIfAllowed(entry, look, 'Cluster API lets this Machine be remediated again: reported; waiting for the incident to open', true))
      followSoon(entry);
  }

  /**
   * Reported again from a follow round: its incident is followed as soon as it opens, not a round
   * later, so its decisions reach the request (and its Machine's Events) as they happen. In the
   * background: a round does not wait on one request.
   */
  function followSoon(entry: Tracked): void {
    void waitFor(() => incidentFor(entry), { timeoutMs: 10_000, intervalMs: 50, what: `the incident of ${keyOf(entry.request)}` }).then(
      (opened) => (entry.incidentId || stopped ? undefined : inTurn(entry, () => follow(entry, opened))),
      () => undefined,
    );
  }

  /**
   * An incident of the request's own, while Cluster API holds the request back: stopped if no
   * removal began (nothing new is done to etcd for a Machine Cluster API stopped acting on); a
   * removal under way finishes, since stopping it half-way would leave the cluster short.
   */
  async function stopIfHeld(entry: Tracked, incident: Incident, look: GateLook): Promise<void> {
    const gate = await look(entry.request);
    if (gate.kind !== 'held') return;
    const outcome = await withdrawIncident(runtime, incident.incidentId, gate.hold.message, {
      reason: gate.hold.reason,
      next: 'The request is reported again once Cluster API lets its Machine be remediated.',
    });
    if (outcome.kind === 'withdrawn') return follow(entry, outcome.incident);
    if (outcome.kind === 'too-late' && entry.lateSaid !== incident.incidentId) {
      entry.lateSaid = incident.incidentId;
      const what =
        gate.hold.reason === 'CLUSTER_PAUSED'
          ? 'Cluster API paused remediation of the Machine'
          : gate.hold.reason === 'COMPETING_REMEDIATION'
            ? 'another MachineHealthCheck hands the Machine to another remediator'
            : 'its MachineHealthCheck does not allow remediation now';
      log.warn(`${what}, but its removal is under way: it finishes`, {
        request: keyOf(entry.request),
        incidentId: incident.incidentId,
        why: outcome.why,
        said: gate.hold.message,
      });
    }
  }

  /** The object is gone. Held by our finalizer, its deletion was handled already; otherwise its cause is decided now. */
  async function gone(object: RequestObject): Promise<void> {
    const request = toRemediationRequest(object);
    if (!request) return;
    const key = keyOf(request);
    const entry = tracked.get(key);
    tracked.delete(key);
    if (entry) byIncident.get(entry.incidentId ?? '')?.delete(key);
    if (!entry || entry.deletion || !entry.incidentId || ended(entry)) return;
    const cause = await deletionCause(entry);
    if (cause === 'collected')
      return void log.info('request deleted by the garbage collector after its Machine, without our finalizer; its incident goes on', {
        request: key,
        incidentId: entry.incidentId,
      });
    await withdrawIncidentOf(entry);
  }

  /** The incident read again and followed: on its events, the request's status moves as it does. */
  async function refresh(entry: Tracked, incidentId: string): Promise<void> {
    if (entry.incidentId !== incidentId || ended(entry)) return;
    const incident = await runtime.store.getIncident(incidentId);
    if (incident && entry.incidentId === incidentId) await follow(entry, incident);
  }

  const onEvent = (event: EventEnvelope): void => {
    const incidentId = (event.detail as { incidentId?: string }).incidentId;
    if (!incidentId) return;
    for (const key of byIncident.get(incidentId) ?? []) {
      const entry = tracked.get(key);
      if (!entry || ended(entry) || entry.incidentId !== incidentId) continue;
      const told = kubeEventOf(event);
      if (told) tell(entry, told);
      inTurn(entry, () => refresh(entry, incidentId)).catch((error: unknown) =>
        log.warn('incident not read on its event; read again on the next round', { incidentId, error: String(error) }),
      );
    }
  };
  const unsubscribe = runtime.subscribe?.(onEvent) ?? (() => undefined);
  /** One request, once a round: the store is the truth, and Cluster API's word is read afresh. */
  async function followRound(entry: Tracked, look: GateLook): Promise<void> {
    if (entry.clusterId === '') return;
    await settleHold(entry);
    // A withdrawn request is not reported again; a collected one is followed to its incident's end.
    if (entry.deletion?.cause === 'withdrawn') return;
    if (entry.held && !entry.deletion) return lookAgain(entry, look);
    if (recheckDue(entry) && !entry.deletion) return recheck(entry, look);
    if (ended(entry)) {
      if (entry.deletion) return;
      // Released for MHC's other Machines (again, if marking it failed), and reported again once a person allows it.
      release.releaseIfEnded(entry);
      return entry.skipMarked ? release.reportAgainOnceReleased(entry, look) : undefined;
    }
    // Reported, but its incident was not open yet when last looked for (a remote stack is slower).
    if (!entry.incidentId) {
      const incident = await incidentFor(entry);
      if (incident && !entry.incidentId) return follow(entry, incident);
      if (!incident) return reportAgainIfStranded(entry, look);
      return;
    }
    const incidentId = entry.incidentId;
    const incident = await runtime.store.getIncident(incidentId);
    if (!incident || entry.incidentId !== incidentId) return;
    if (incident.state === 'open' && !entry.holder) await stopIfHeld(entry, incident, look);
    if (incident.state === 'awaiting-replacement' && entry.incidentId === incidentId) await lookAtReplacement(entry, incident);
    // A withdrawal above followed the newer incident already.
    if (entry.incidentId !== incidentId || entry.held) return;
    await follow(entry, incident);
  }

  let rounding = false;
  const followed = setInterval(() => {
    // One round at a time: a slow store or API server does not pile rounds up.
    if (rounding || stopped) return;
    rounding = true;
    const look = gates.look();
    void Promise.all(
      [...tracked.values()].map((entry) =>
        inTurn(entry, () => followRound(entry, look)).catch((error: unknown) =>
          log.warn('request not followed this round; followed again on the next', { request: keyOf(entry.request), error: String(error) }),
        ),
      ),
    ).finally(() => (rounding = false));
  }, followIntervalMs);
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
  informer.on('delete', (object) => handled(gone(object), 'delete'));
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
      stopped
        ? 'stopped'
        : dropped !== undefined
          ? `the request watch dropped (${dropped}); starting it again`
          : !listed
            ? 'the first list of EtcdRemediationRequests is not in yet'
            : undefined,
    async stop() {
      stopped = true;
      coexistence.stop();
      clearInterval(followed);
      unsubscribe();
      await informer.stop();
      await Promise.all([...tracked.values()].flatMap((entry) => [entry.writes, entry.machineWrites ?? Promise.resolve()]));
      // The last decisions' Events, a few seconds at most: stopping is not held up by an API server gone.
      await recorder.flush(5_000);
    },
  };
}
