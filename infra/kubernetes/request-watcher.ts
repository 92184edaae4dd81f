// The MachineHealthCheck side: each new EtcdRemediationRequest becomes a MemberUnhealthy for its
// Machine, reported to the embedded runtime or to a deployed stack's bus; the incident is followed
// by level, as Cluster API's controllers reconcile: each round (and, locally, each of its events on
// the bus) reads it from its store, recomputes the request's whole status from it, and writes only
// what differs from what the request shows; a
// request deleted before removal began withdraws its incident. A request whose member another
// incident holds follows that one. Nothing is reported while Cluster API has stopped acting on the
// Machine (its Cluster, MachineHealthCheck or Machine paused, or the MHC short-circuited): the
// status says so, each follow round looks again, and an incident of the request that has not begun
// removing stops then. The informer lists, then watches from the list's resourceVersion, and
// relists on 410 Gone; after a dropped watch it is started again from where it was. Each request
// carries our finalizer while it stands, so one the garbage collector deletes with its Machine is
// followed to its outcome before it goes; a deletion is judged by the Machine (there and healthy:
// MHC withdrew it; gone or deleting: collected). Each status is also the Machine's
// ExternallyRemediated condition. MachineHealthChecks that compete with ours for the same Machines
// are looked for at start and every few minutes (coexistence-scan.ts).
import os from 'node:os';
import { CoreV1Api, CustomObjectsApi, makeInformer, type Informer, type KubeConfig } from '@kubernetes/client-node';
import { handleWhenResult, retry } from 'cockatiel';
import type { EventEnvelope } from '../../events/catalogue.ts';
import { createRemediationGate, type Gate, type GateLook } from '../../functions/adapters/kube/cluster-api/remediation-gate.ts';
import { createEventRecorder, machineReference } from '../../functions/adapters/kube/cluster-api/object-events.ts';
import {
  conditionsOf,
  externallyRemediatedOf,
  type Condition,
  truncateNote,
  type InvolvedObject,
  type ObjectEventSaid,
} from '../../functions/core/kubernetes/index.ts';
import { createMachineReader } from '../../functions/adapters/kube/cluster-api/machines.ts';
import { writeMachineCondition } from '../../functions/adapters/kube/cluster-api/machine-remediated.ts';
import { replacementHold } from '../../functions/adapters/kube/cluster-api/replacement-hold.ts';
import { markSkipRemediation, SKIP_REMEDIATION_ANNOTATION, skipRemediationOf } from '../../functions/adapters/kube/cluster-api/machine-skip.ts';
import { kubeEventOf, kubeEventOfIncident } from './decision-events.ts';
import { startCoexistenceScan } from './coexistence-scan.ts';
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
import type { MachineApiVersion } from '../../functions/ports/kube-access.ts';
import type { OutboxDeps } from '../../functions/app/common/index.ts';
import { withdrawIncident, type WithdrawOutcome } from '../../functions/app/incident/index.ts';
import { doublingBackoff } from '../../functions/lib/doubling-backoff.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';
import { journalSteps, type JournalEntry } from '../../functions/core/incident/index.ts';
import type { InProcessBus } from '../../functions/adapters/local/in-process-bus.ts';
import { describeKubeError } from '../../functions/adapters/kube/api-errors.ts';
import { followedInHolder, incidentOfRequest, isOwnIncident } from './request-incident.ts';
import { incidentsSince } from './request-history.ts';
import { goesOnAfter, statusOfIncident } from './request-status.ts';

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
  /** How often, while a request awaits its replacement, the control plane is read for what holds it (default 10 s). */
  replacementLookMs?: number;
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
  /** The Cluster API version the Clusters, MachineHealthChecks and Machines are read in (default v1beta1). */
  clusterApiVersion?: MachineApiVersion;
  /** Who writes the Kubernetes Events (their reportingInstance; default the host's name, a pod's own). */
  eventInstance?: string;
  /**
   * A request the garbage collector deleted after its Machine (ours to delete) stays, held by the
   * finalizer, this long once its outcome is written (default 15 min), so `kubectl wait` and
   * `kubectl get` still read it after the replacement joined.
   */
  keepEndedMs?: number;
  /** ...and at most this long after its deletion when no outcome comes (default 2 h): a request is never held for ever. */
  holdAfterDeletionMs?: number;
  /** How often the MachineHealthChecks are looked over for ones competing with ours (default 5 min; the first look at start). */
  coexistenceScanMs?: number;
  /**
   * How often the Machine of a request that ended for a person (Blocked, Failed; annotated
   * skip-remediation) is read for that annotation's removal (default 30 s): one GET a request, not one a round.
   */
  releaseLookMs?: number;
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
  /** Set while the incident followed is another report's, holding this Machine's member. */
  holder?: Pick<Incident, 'incidentId' | 'target'>;
  /** When the request was last reported, while no incident is known for it. */
  reportedAt?: number;
  /** Incidents opened before this belong to an earlier report of the request. */
  since?: number;
  /** When its incident closed as recovered; the request is looked at again later. */
  recoveredAt?: number;
  /** Not reported: Cluster API holds it back, or could not be read; each follow round looks again. */
  held?: boolean;
  /** The incident whose removal under way was said to finish despite a hold (said once). */
  lateSaid?: string;
  /** The request's conditions as last written (or read), for their transition times. */
  conditions: Condition[];
  /** The Machine the Events of its decisions go on, once looked up. */
  machine?: Promise<InvolvedObject>;
  /** The last decision of a store-read incident said as an Event (only without the bus's events). */
  saidDecision?: string;
  /**
   * The status the request shows (its conditions aside: they follow from it), as the watch last
   * delivered it or we last wrote it; undefined once a write failed, so the next writes it whole.
   */
  shown?: Said;
  /** Status writes, one after the other, so the last status computed is the one that stays. */
  writes: Promise<void>;
  /** Reconciles of the request (a round's, an event's), one after the other: a read of the incident is never written after a newer one. */
  turn: Promise<void>;
  /** The incident's journal as read at a version of it (for the leader move it records). */
  journalRead?: { incidentId: string; version: number; journal: JournalEntry[] };
  /**
   * Its deletion, once seen (a deletionTimestamp under our finalizer, or the object gone): withdrawn
   * by its MachineHealthCheck (the Machine is there and healthy), or collected with the Machine.
   */
  deletion?: { cause: 'withdrawn' | 'collected'; since: number; endedAt?: number; settled?: boolean };
  /** The finalizer is being added or removed: one patch at a time. */
  patchingHold?: boolean;
  /** The Machine's ExternallyRemediated as last written (its reason, status and message). */
  machineSaid?: string;
  /**
   * Ended Blocked or Failed (a person must act): its Machine annotated skip-remediation so its MHC
   * goes on with its other Machines; a person removing the annotation reports the request again.
   */
  skipMarked?: boolean;
  /** When its Machine was last read for the skip-remediation annotation's removal. */
  releaseLookedAt?: number;
  /** What holds its replacement, in Cluster API's words (KCP's ScalingUp), while it awaits one; and when that was last read. */
  replacementHeld?: string;
  replacementLookedAt?: number;
  /** The hold the incident's journal last took (a line that failed is written on the next look); undefined once released. */
  replacementJournaled?: string;
  /** The one it should say now, and the writes of it, one after the other. */
  machineWanted?: Omit<Condition, 'observedGeneration'>;
  machineWrites?: Promise<void>;
}

type Said = Omit<RequestStatus, 'updatedAt'>;

/** What a new report of a request leaves behind of the status before it: nothing of its incident. */
const BEFORE_REPORT: readonly (keyof RequestStatus)[] = ['reasonCode', 'incidentId', 'leaderMove', 'startedAt', 'completedAt'];

/** The fields a status is compared on: its conditions follow from them, its updatedAt from the write. */
const STATUS_FIELDS = ['phase', 'reasonCode', 'message', 'incidentId', 'leaderMove', 'startedAt', 'completedAt', 'observedGeneration'] as const;

/** What a request shows once `status` is merged into it, and `clear` deleted from it. */
function merged(shown: Said | undefined, status: Said, clear: readonly (keyof RequestStatus)[]): Said {
  const next: Record<string, unknown> = { ...shown, ...status };
  for (const key of clear) if ((status as Partial<RequestStatus>)[key] === undefined) delete next[key];
  return next as Said;
}

const sameStatus = (a: Said, b: Said): boolean => STATUS_FIELDS.every((key) => a[key] === b[key]);

/** The status a request shows, as the API server gave it. */
function shownOf(status: Partial<RequestStatus> | undefined): Said | undefined {
  if (!status?.phase) return undefined;
  const fields = STATUS_FIELDS.flatMap((key) => (status[key] === undefined ? [] : [[key, status[key]]]));
  return Object.fromEntries(fields) as Said;
}

/** Ended, as the request shows: followed no more, unless it is reported again. */
const ended = (entry: Pick<Tracked, 'shown'>): boolean => isTerminalPhase(entry.shown?.phase);

const keyOf = (r: Pick<RemediationRequest, 'namespace' | 'machineName'>): string => `${r.namespace}/${r.machineName}`;

/** The request's Machine: MHC names the request after it, in its namespace. */
const machineOf = (r: Pick<RemediationRequest, 'namespace' | 'machineName'>): { namespace: string; name: string } => ({
  namespace: r.namespace,
  name: r.machineName,
});

/** What holds a replacement, as the request, its Event and the incident's journal say it. */
const notCome = (hold: string): string => `The replacement has not come: ${hold}.`;

/** A look made at most once every `everyMs`: due when never made, or that long ago. */
const lookDue = (lastAt: number | undefined, everyMs: number, now: number): boolean => lastAt === undefined || now - lastAt >= everyMs;

const describeInterval = (ms: number): string => (ms % 1_000 === 0 ? `${ms / 1_000} s` : `${ms} ms`);

/** A step may hold the incident for a moment: asked again after 100 ms, then twice as long, up to 2 s apart. */
const withdrawAgain = retry(
  handleWhenResult((outcome) => (outcome as WithdrawOutcome | undefined)?.kind === 'busy'),
  { maxAttempts: Infinity, backoff: doublingBackoff(100, 2_000) },
).dangerouslyUnref();

export function startRequestWatcher(options: RequestWatcherOptions): RequestWatcher {
  const { runtime, log } = options;
  const customObjects = options.management.makeApiClient(CustomObjectsApi);
  const requests = createRequestClient(customObjects);
  const gates = createRemediationGate(customObjects, options.clusterApiVersion);
  /** The version Clusters, MachineHealthChecks, Machines and the control plane are read and written in. */
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

  /**
   * Writes what differs between `status` (with `clear` deleted) and what the request shows; true
   * when it wrote. A failed write leaves what the request shows unknown, so the next writes it whole.
   */
  const write = (entry: Tracked, status: Said, clear: readonly (keyof RequestStatus)[] = []): Promise<boolean> => {
    if (status.phase === 'Recovered') entry.recoveredAt ??= runtime.clock.now();
    const written = entry.writes
      .then(async () => {
        if (stopped) return false;
        const generation = entry.request.generation === undefined ? {} : { observedGeneration: entry.request.generation };
        const next = { ...merged(entry.shown, status, clear), ...generation };
        if (entry.shown && sameStatus(next, entry.shown)) return false;
        const now = new Date(runtime.clock.now()).toISOString();
        const conditions = conditionsOf(next, entry.conditions, { now: now.replace(/\.\d{3}Z$/, 'Z'), generation: entry.request.generation });
        const full: RequestStatus = { ...next, updatedAt: now, conditions };
        if (!(await requests.writeStatus(entry.request, full, clear)))
          log.info('request gone before its status was written', { request: keyOf(entry.request) });
        entry.shown = next;
        entry.conditions = conditions;
        tellMachine(entry, conditions);
        releaseIfEnded(entry);
        return true;
      })
      .catch((error: unknown) => {
        entry.shown = undefined;
        log.warn('request status not written; written again from the incident on the next follow round', {
          request: keyOf(entry.request),
          error: String(error),
        });
        return false;
      });
    entry.writes = written.then(() => undefined);
    return written;
  };

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

  /**
   * A status of the incident followed, saying whose it is when it is another report's, and, while
   * it awaits its replacement, what holds that replacement in Cluster API's words.
   */
  const said = (entry: Tracked, status: Said): Said => {
    const whose = entry.holder ? { ...status, message: followedInHolder(entry.holder, status.message) } : status;
    return whose.phase === 'AwaitingReplacement' && entry.replacementHeld
      ? { ...whose, message: `${whose.message ?? ''} ${notCome(entry.replacementHeld)}`.trim() }
      : whose;
  };

  /**
   * While the incident awaits its replacement: reads what Cluster API says holds the control
   * plane's scale-up (KCP paused, its preflight checks), and when that changes says it as an Event
   * (the status says it from then on). At most once every replacementLookMs.
   */
  async function lookAtReplacement(entry: Tracked, incident: Incident): Promise<void> {
    const now = runtime.clock.now();
    if (!lookDue(entry.replacementLookedAt, options.replacementLookMs ?? 10_000, now)) return;
    entry.replacementLookedAt = now;
    const cluster = { namespace: entry.request.namespace, name: entry.request.clusterName ?? '' };
    const hold = await replacementHold(customObjects, machineApi, cluster).catch((error: unknown) => {
      log.warn('the control plane not read for what holds the replacement; read again later', { request: keyOf(entry.request), error: String(error) });
      return entry.replacementHeld;
    });
    // Into the incident's journal too, where status and the report read it: a line that cannot be
    // written now is said, and written on the next look; the request's status and Event say it meanwhile.
    if (hold !== entry.replacementJournaled)
      await runtime.store
        .appendJournal(incident.incidentId, {
          at: now,
          step: journalSteps.replacementChecked,
          detail: hold
            ? { reason: 'REPLACEMENT_HELD', message: notCome(hold) }
            : { reason: 'REPLACEMENT_RELEASED', message: "What held the control plane's scale-up no longer does." },
        })
        .then(
          () => void (entry.replacementJournaled = hold),
          (error: unknown) => log.warn('the replacement hold not journaled; written on the next look', { request: keyOf(entry.request), error: String(error) }),
        );
    if (hold === entry.replacementHeld) return;
    entry.replacementHeld = hold;
    if (hold) tell(entry, { reason: 'ReplacementHeld', note: truncateNote(notCome(hold)), type: 'Warning', action: 'CheckReplacement' });
    log.info(hold ? 'the replacement is held by the control plane' : 'the replacement is no longer held', {
      request: keyOf(entry.request),
      ...(hold ? { hold } : {}),
    });
  }

  /** A decision as a Kubernetes Event on the request's Machine; in the background, never failing the request. */
  function tell(entry: Tracked, said: ObjectEventSaid): void {
    entry.machine ??= machineReference(customObjects, entry.request, machineApi);
    void entry.machine.then((machine) => recorder.record(machine, said));
  }

  /**
   * The Machine's ExternallyRemediated condition from the request's, in the background, one write
   * at a time per request and always the latest (the adapter makes a write that lost a race again
   * from a fresh read); a Machine gone is nothing to tell.
   */
  function tellMachine(entry: Tracked, conditions: readonly Condition[]): void {
    const condition = externallyRemediatedOf(conditions);
    if (!condition) return;
    entry.machineWanted = condition;
    entry.machineWrites = (entry.machineWrites ?? Promise.resolve()).then(async () => {
      const wanted = entry.machineWanted;
      const key = wanted && JSON.stringify([wanted.status, wanted.reason, wanted.message]);
      if (!wanted || key === entry.machineSaid || stopped) return;
      try {
        await writeMachineCondition(customObjects, machineApi, machineOf(entry.request), wanted);
        entry.machineSaid = key;
      } catch (error) {
        log.warn("the Machine's ExternallyRemediated condition not written; written on the request's next change", {
          request: keyOf(entry.request),
          error: String(error),
        });
      }
    });
  }

  /**
   * A request left Blocked or Failed would starve its MachineHealthCheck's other Machines (MHC
   * returns at the first unhealthy Machine that already has a request): its Machine is annotated
   * skip-remediation, which takes it out of MHC's targets while the request, its status, the
   * Machine's condition and Events stay for a person. In the background; said in the log and as
   * an Event.
   */
  function releaseIfEnded(entry: Tracked): void {
    const status = entry.shown;
    if (!status || (status.phase !== 'Blocked' && status.phase !== 'Failed') || entry.skipMarked || entry.deletion) return;
    entry.skipMarked = true;
    const why = `etcd-remediator: ${status.reasonCode ?? status.phase} (incident ${status.incidentId ?? entry.incidentId ?? 'unknown'}); remove this annotation to have the Machine remediated again`;
    markSkipRemediation(customObjects, machineApi, machineOf(entry.request), why).then(
      (marked) => {
        if (!marked) return;
        log.info('request ended for a person to act; its Machine annotated skip-remediation so its MachineHealthCheck goes on with its other Machines', {
          request: keyOf(entry.request),
        });
        tell(entry, {
          reason: 'SkipRemediation',
          note: truncateNote(
            `${SKIP_REMEDIATION_ANNOTATION} set: this request ended ${status.phase}, and while it stands its MachineHealthCheck would create no request for its other unhealthy Machines. Remove the annotation once the cause is fixed: the request is then reported again.`,
          ),
          type: 'Warning',
          action: 'Release',
        });
      },
      (error: unknown) => {
        entry.skipMarked = false;
        log.warn('Machine not annotated skip-remediation; tried again on the next round', { request: keyOf(entry.request), error: String(error) });
      },
    );
  }

  /** A person removed the annotation from a Machine whose request ended Blocked or Failed: reported again. */
  async function reportAgainOnceReleased(entry: Tracked, look: GateLook): Promise<void> {
    const now = runtime.clock.now();
    if (!lookDue(entry.releaseLookedAt, options.releaseLookMs ?? 30_000, now)) return;
    entry.releaseLookedAt = now;
    const value = await skipRemediationOf(customObjects, machineApi, machineOf(entry.request));
    if (value !== undefined) return;
    detach(entry);
    Object.assign(entry, { skipMarked: false, since: now - 1_000 });
    log.info(`${SKIP_REMEDIATION_ANNOTATION} removed from the Machine of a request that ended for a person to act; reporting it again`, {
      request: keyOf(entry.request),
    });
    if (await reportIfAllowed(entry, look, `${SKIP_REMEDIATION_ANNOTATION} was removed from the Machine: reported again`, true)) followSoon(entry);
  }

  /**
   * Why a request is being deleted: its MHC withdrew it (the Machine is there, the same one, not
   * deleting: healthy again), or the garbage collector took it after its Machine went (ours to
   * delete once the member is out). Undefined when the Machine cannot be read now.
   */
  async function deletionCause(entry: Tracked): Promise<'withdrawn' | 'collected' | undefined> {
    const reader = createMachineReader({ customObjects, clusterName: entry.request.clusterName ?? '', version: machineApi });
    const machine = await reader.machineByName(entry.request.namespace, entry.request.machineName).catch((error: unknown) => {
      log.warn("the request's Machine not read, so why the request is deleted is not known yet; read again on the next round", {
        request: keyOf(entry.request),
        error: String(error),
      });
      return null;
    });
    if (machine === null) return undefined;
    const owner = entry.request.machineOwner?.uid;
    return !machine || machine.deleting || (owner !== undefined && owner !== machine.uid) ? 'collected' : 'withdrawn';
  }

  /** Adds or removes the finalizer; a failure (a Conflict with a newer version) is tried again on the next change or round. */
  async function setHold(entry: Tracked, hold: boolean): Promise<boolean> {
    if (entry.patchingHold) return false;
    entry.patchingHold = true;
    try {
      await requests.holdForOutcome(entry.request, entry.request.finalizers ?? [], hold);
      return true;
    } catch (error) {
      log.warn(`request finalizer not ${hold ? 'added' : 'removed'}; tried again on the next round`, { request: keyOf(entry.request), error: String(error) });
      return false;
    } finally {
      entry.patchingHold = false;
    }
  }

  /**
   * The request's finalizer by level, each time it is seen and each round: added while it stands;
   * once it is being deleted, the cause decided once, then removed when that deletion may go on.
   */
  async function settleHold(entry: Tracked): Promise<void> {
    if (stopped || entry.clusterId === '') return;
    const { request } = entry;
    if (request.deletingSince === undefined) {
      if (!request.heldForOutcome) await setHold(entry, true);
      return;
    }
    if (!entry.deletion) {
      const cause = await deletionCause(entry);
      if (!cause || entry.deletion) return;
      entry.deletion = { cause, since: Date.parse(request.deletingSince) || runtime.clock.now() };
      if (cause === 'collected')
        log.info('request deleted by the garbage collector after its Machine, which this incident replaces; kept until its outcome is written', {
          request: keyOf(request),
          incidentId: entry.incidentId,
        });
      else void withdrawIncidentOf(entry).finally(() => (entry.deletion!.settled = true));
    }
    if (!request.heldForOutcome || !releaseDue(entry)) return;
    if (await setHold(entry, false)) log.info('request released: its deletion goes on', { request: keyOf(request), cause: entry.deletion.cause });
  }

  /** Whether a deleting request may go now (the deletion's cause decided). */
  function releaseDue(entry: Tracked): boolean {
    const deletion = entry.deletion!;
    if (deletion.cause === 'withdrawn') return deletion.settled === true;
    const now = runtime.clock.now();
    if (ended(entry)) {
      deletion.endedAt ??= now;
      return now - deletion.endedAt >= (options.keepEndedMs ?? 15 * 60_000);
    }
    const limit = options.holdAfterDeletionMs ?? 2 * 3_600_000;
    if (now - deletion.since < limit) return false;
    log.warn('request held for its outcome past holdAfterDeletionMs without one: released; the incident goes on, read it with status', {
      request: keyOf(entry.request),
      incidentId: entry.incidentId,
      holdAfterDeletionMs: limit,
    });
    return true;
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

  /** Its MachineHealthCheck deleted the request: its own incident stops, unless removal began. */
  async function withdrawIncidentOf(entry: Tracked): Promise<void> {
    const key = keyOf(entry.request);
    if (!entry.incidentId || ended(entry)) return;
    // Another report's incident: that report still stands.
    if (entry.holder)
      return void log.info("request deleted; the incident it followed is another report's, and goes on", { request: key, incidentId: entry.incidentId });
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
    else if (!stopped)
      log.warn('request deleted, but its incident was not withdrawn: a step held it all along; the incident goes on', {
        request: key,
        incidentId,
        withinMs,
        tries,
      });
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
      releaseIfEnded(entry);
      return entry.skipMarked ? reportAgainOnceReleased(entry, look) : undefined;
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
