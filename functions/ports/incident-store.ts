// The incident store: the only thing the handlers share. Every write is one conditional write,
// so the same port maps onto DynamoDB (condition expressions) as well as onto SQLite.
import type { EventEnvelope } from '../../events/catalogue.ts';
import type { Decision } from '../core/decision.ts';
import type { CarriedStreak } from '../core/evidence.ts';
import type { RemediationHistory } from '../core/remediation-history.ts';
import type { RemovalRecord } from '../core/replacement.ts';
import type { ClusterView } from '../core/view.ts';
import type { ScheduleRequest } from './scheduler.ts';

export type IncidentState = 'open' | 'remediated' | 'blocked' | 'closed' | 'failed';
export type IncidentOutcome = Exclude<IncidentState, 'open'>;

/** One remediation of one target member in one cluster. Times are epoch milliseconds. */
export interface Incident {
  incidentId: string;
  clusterId: string;
  /** Canonical form of `target`, e.g. "memberName=etcd-0"; see core `targetKeyOf`. */
  targetKey: string;
  target: Record<string, string>;
  reason: string;
  state: IncidentState;
  openedAt: number;
  updatedAt: number;
  /** Every retry, waiting or not: orders events, so a stale one is recognised. */
  attempt: number;
  /** Retries that only waited (see waitingReasons): they do not count against the attempt budget. */
  waits: number;
  immediateReprobes: number;
  /** Set once the target is resolved to an etcd member. */
  memberId?: string;
  /** The etcd cluster_id the incident's first answering probe reached: it is never judged against another. */
  etcdClusterId?: string;
  memberName?: string;
  /** Recent cluster views, oldest first, at most MAX_INCIDENT_VIEWS. */
  views: ClusterView[];
  lastDecision?: Decision;
  /** When and at which term the target was first seen unreachable as leader, in the current streak. */
  leaderUnreachable?: CarriedStreak;
  result?: unknown;
  /**
   * What a committed step still has to say or schedule: written in the same conditional write as
   * the step's outcome, carried out after it, and cleared once done. Whoever reads the incident
   * next with a non-empty outbox carries it out again, so a lost publish is never lost for good.
   */
  outbox: OutboxEntry[];
  /** Steps committed at the current attempt ("move-leader@3"): a redelivery of their event does nothing. */
  stepsDone: string[];
  /** The step running now, and until when its lease holds; a duplicate delivery meanwhile is ignored. */
  inFlight?: InFlight;
  /** Bumped by every write; `updateIncident` is conditional on it. */
  version: number;
}

export type OutboxEntry =
  | { kind: 'journal'; entry: JournalInput }
  | { kind: 'schedule'; request: ScheduleRequest }
  | { kind: 'publish'; event: EventEnvelope };

export interface InFlight {
  /** "step@attempt". */
  key: string;
  /** The Lambda request id that holds it; absent for the local runtime. */
  holder?: string;
  /** Epoch ms; past it, the holder is taken for dead and the step may be taken again. */
  until: number;
}

export interface OpenIncidentInput {
  clusterId: string;
  targetKey: string;
  target: Record<string, string>;
  reason: string;
  now: number;
  /** A caller-chosen id makes a redelivered open idempotent too; generated when absent. */
  incidentId?: string;
}

/** Fields a handler may change; `views` is replaced and trimmed to the newest MAX_INCIDENT_VIEWS. */
export type IncidentPatch = Partial<
  Pick<
    Incident,
    | 'attempt'
    | 'waits'
    | 'immediateReprobes'
    | 'memberId'
    | 'memberName'
    | 'etcdClusterId'
    | 'views'
    | 'lastDecision'
    | 'result'
    | 'outbox'
    | 'stepsDone'
  >
> & {
  /** null ends the streak. */
  leaderUnreachable?: CarriedStreak | null;
  /** null: no step runs. */
  inFlight?: InFlight | null;
  /** Closes the incident; only an open one can be closed. */
  state?: IncidentOutcome;
};

export interface CloseIncidentInput {
  outcome: IncidentOutcome;
  result: unknown;
  now: number;
  expectVersion?: number;
}

export interface JournalInput {
  at: number;
  step: string;
  detail?: unknown;
}

export interface JournalEntry extends JournalInput {
  /** True for entries written by `markStep`: at most one per incident and step. */
  isStepMarker: boolean;
}

export interface DeadLetterInput {
  receivedAt: number;
  source: string;
  detailType: string;
  /** The raw input, exactly as received. */
  payload: string;
  error: string;
}

export interface DeadLetter extends DeadLetterInput {
  id: string;
}

export interface StoredTimer {
  name: string;
  fireAt: number;
  payload: unknown;
  /** Changes whenever the timer is put again, so a fired timer is deleted only if unchanged. */
  revision: number;
}

export interface TimerInput {
  name: string;
  fireAt: number;
  payload: unknown;
}

export interface IncidentRecords {
  /** Atomic: while an incident is open for (clusterId, targetKey), every caller joins it. */
  openOrJoin(input: OpenIncidentInput): Promise<{ incident: Incident; joined: boolean }>;
  getIncident(incidentId: string): Promise<Incident | undefined>;
  /** Oldest first. */
  listIncidents(filter?: { clusterId?: string; state?: IncidentState }): Promise<Incident[]>;
  /** Throws VersionConflictError unless the stored version is `expectVersion`; closing a closed incident is a conflict too. */
  updateIncident(
    incidentId: string,
    patch: IncidentPatch,
    options: { expectVersion: number; now: number },
  ): Promise<Incident>;
  /** First close wins: closing a closed incident returns it unchanged. */
  closeIncident(incidentId: string, input: CloseIncidentInput): Promise<Incident>;
}

export interface IncidentJournal {
  appendJournal(incidentId: string, entry: JournalInput): Promise<void>;
  /** In the order written. */
  journal(incidentId: string): Promise<JournalEntry[]>;
  /** Records a step once; true only for the call that recorded it. */
  markStep(incidentId: string, entry: JournalInput): Promise<boolean>;
  stepDone(incidentId: string, step: string): Promise<boolean>;
}

/** The etcd cluster_id each configured cluster answered with first: a cluster that changes identity is refused. */
export interface ClusterIdentities {
  knownIdentity(clusterId: string): Promise<{ etcdClusterId: string; since: number } | undefined>;
  /** First write wins; returns what is remembered now. */
  rememberIdentity(clusterId: string, etcdClusterId: string, at: number): Promise<{ etcdClusterId: string; since: number }>;
}

export interface ClusterLocks {
  /** Succeeds when the lock is free, its lease has expired, or `owner` holds it (renewing the lease). */
  acquireLock(clusterId: string, owner: string, leaseMs: number, now: number): Promise<boolean>;
  /** Only the owner can release; true when it did. */
  releaseLock(clusterId: string, owner: string): Promise<boolean>;
  /**
   * The removal record of a single-remediator cluster (policy singleRemediator), oldest first;
   * every other cluster keeps its record in its own etcd, where every remediator sees it.
   */
  removalRecords(clusterId: string): Promise<RemovalRecord[]>;
  /** Writes the whole list; only the lock holder writes it. */
  saveRemovalRecords(clusterId: string, records: RemovalRecord[]): Promise<void>;
}

export interface DeadLetters {
  putDeadLetter(input: DeadLetterInput): Promise<DeadLetter>;
  /** Oldest first. */
  listDeadLetters(): Promise<DeadLetter[]>;
}

export interface RemediationLedger {
  /** Idempotent for the same (clusterId, targetKey, at). */
  recordRemediation(clusterId: string, targetKey: string, at: number): Promise<void>;
  remediationHistory(
    clusterId: string,
    targetKey: string,
    options: { minHealthyPeriodMs: number; now: number },
  ): Promise<RemediationHistory>;
}

export interface TimerStore {
  /** Upsert by name: the same name never makes a second timer. */
  putTimer(input: TimerInput): Promise<StoredTimer>;
  /** Timers with fireAt ≤ now, earliest first. */
  dueTimers(now: number): Promise<StoredTimer[]>;
  /** With `revision`, deletes only if the timer was not put again since it was read. */
  deleteTimer(name: string, revision?: number): Promise<boolean>;
  nextTimer(): Promise<StoredTimer | undefined>;
}

/** What the functions need, on any backend (SQLite locally, DynamoDB on AWS). Timers are the local scheduler's own. */
export interface IncidentStore extends IncidentRecords, IncidentJournal, ClusterIdentities, ClusterLocks, DeadLetters, RemediationLedger {
  close(): Promise<void>;
}

export class IncidentNotFoundError extends Error {
  readonly incidentId: string;
  constructor(incidentId: string) {
    super(`incident ${incidentId} not found`);
    this.name = 'IncidentNotFoundError';
    this.incidentId = incidentId;
  }
}

/** Someone else wrote the incident since it was read: re-read and decide again. */
export class VersionConflictError extends Error {
  readonly incidentId: string;
  readonly expectedVersion: number;
  readonly actualVersion: number;
  constructor(incidentId: string, expectedVersion: number, actualVersion: number) {
    super(`incident ${incidentId} is at version ${actualVersion}, expected ${expectedVersion}`);
    this.name = 'VersionConflictError';
    this.incidentId = incidentId;
    this.expectedVersion = expectedVersion;
    this.actualVersion = actualVersion;
  }
}
