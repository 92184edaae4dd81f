// The incident store: the only thing the handlers share. Every write is one conditional write,
// so the same port maps onto DynamoDB (condition expressions) as well as onto SQLite.
import type { EventEnvelope } from '../../events/catalogue.ts';
import type { CarriedStreak } from '../core/view/index.ts';
import type { IncidentOf, IncidentOutcome, IncidentState, InFlight, OutboxEntryOf, JournalEntry, JournalInput, MarkerStep } from '../core/incident/index.ts';
import type { RemediationHistory } from '../core/removal/index.ts';
import type { RemovalRecord } from '../core/replacement/index.ts';
import type { HygieneRecord } from '../core/hygiene/index.ts';
import type { MaintenanceRecord } from '../core/maintenance/index.ts';
import type { FleetRecords } from './fleet.ts';
import type { ScheduleRequest } from './scheduler.ts';

// The entity is core's (core/incident/incident.ts); the outbox carries the edge's events and schedules.
export type { IncidentOutcome, IncidentState, InFlight } from '../core/incident/index.ts';
export type { JournalEntry, JournalInput, MarkerStep } from '../core/incident/index.ts';
export type OutboxEntry = OutboxEntryOf<EventEnvelope, ScheduleRequest>;
export type Incident = IncidentOf<EventEnvelope, ScheduleRequest>;

export interface OpenIncidentInput {
  clusterId: string;
  targetKey: string;
  target: Record<string, string>;
  reason: string;
  now: number;
  /** A caller-chosen id makes a redelivered open idempotent too; generated when absent. */
  incidentId?: string;
}

/** Fields a handler may change; `views` is replaced, and trimmed to what core keptViews keeps (by count and bytes). */
export type IncidentPatch = Partial<
  Pick<
    Incident,
    'attempt' | 'waits' | 'immediateReprobes' | 'memberId' | 'memberName' | 'etcdClusterId' | 'views' | 'lastDecision' | 'result' | 'outbox' | 'stepsDone'
  >
> & {
  /** null ends the streak. */
  leaderUnreachable?: CarriedStreak | null;
  /** null: no step runs. */
  inFlight?: InFlight | null;
  /** Closes the incident; only an open one can be closed. */
  state?: IncidentOutcome;
};

/**
 * Which incidents to list. `openOrChangedSince` bounds what one report reads, however long the
 * cluster's history: its open incidents, and those written at or after that time (epoch ms), read
 * through an index on both backends. A store may return more (every caller filters again), never fewer.
 */
export type IncidentFilter = { clusterId?: string; state?: IncidentState } | { clusterId: string; state?: IncidentState; openOrChangedSince: number };

export interface CloseIncidentInput {
  outcome: IncidentOutcome;
  result: unknown;
  now: number;
  expectVersion?: number;
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
  listIncidents(filter?: IncidentFilter): Promise<Incident[]>;
  /** Throws VersionConflictError unless the stored version is `expectVersion`; closing a closed incident is a conflict too. */
  updateIncident(incidentId: string, patch: IncidentPatch, options: { expectVersion: number; now: number }): Promise<Incident>;
  /** First close wins: closing a closed incident returns it unchanged. */
  closeIncident(incidentId: string, input: CloseIncidentInput): Promise<Incident>;
}

export interface IncidentJournal {
  appendJournal(incidentId: string, entry: JournalInput): Promise<void>;
  /** In the order written. */
  journal(incidentId: string): Promise<JournalEntry[]>;
  /** Records a step once; true only for the call that recorded it. */
  markStep(incidentId: string, entry: JournalInput & { step: MarkerStep }): Promise<boolean>;
  stepDone(incidentId: string, step: MarkerStep): Promise<boolean>;
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

/**
 * When each learner of a cluster was first seen (etcd does not say when a member was added): one
 * record per cluster, read and written by the periodic learner check and by every incident of the
 * cluster, so each learner has one clock.
 */
export interface LearnerSightings {
  /** Member id → first seen (epoch ms); empty when nothing is recorded. */
  learnerSightings(clusterId: string): Promise<Record<string, number>>;
  /**
   * Replaces the record with `seen` (the learners one look saw, and when each was first seen): a
   * member absent from it drops out. For a member already recorded the earlier time is kept, so a
   * writer racing with a later sighting never resets its clock. Returns the record as now stored.
   */
  saveLearnerSightings(clusterId: string, seen: Readonly<Record<string, number>>): Promise<Record<string, number>>;
}

/** A cluster's leader-hygiene record as stored, and its version (1 for the first write). */
export interface StoredHygiene {
  record: HygieneRecord;
  version: number;
}

/**
 * Leader hygiene's one record per cluster (core/hygiene/hygiene-record.ts), written whole under a version:
 * a periodic check and each delivery of a move read it, decide, and write it only if nobody wrote
 * it since, so a move is claimed once.
 */
export interface HygieneRecords {
  /** undefined when the cluster has none yet. */
  hygieneRecord(clusterId: string): Promise<StoredHygiene | undefined>;
  /**
   * Writes the record when the stored version is `expectVersion` (0: none is stored yet) and
   * returns the new version; throws HygieneConflictError otherwise.
   */
  saveHygieneRecord(clusterId: string, record: HygieneRecord, expectVersion: number): Promise<number>;
}

/** Someone wrote a cluster's record since it was read: read it again and decide again. */
export class RecordConflictError extends Error {
  readonly clusterId: string;
  readonly expectedVersion: number;
  constructor(what: string, clusterId: string, expectedVersion: number) {
    super(`the ${what} record of ${clusterId} is no longer at version ${expectedVersion}: another check or delivery wrote it`);
    this.name = 'RecordConflictError';
    this.clusterId = clusterId;
    this.expectedVersion = expectedVersion;
  }
}

export class HygieneConflictError extends RecordConflictError {
  constructor(clusterId: string, expectedVersion: number) {
    super('leader-hygiene', clusterId, expectedVersion);
    this.name = 'HygieneConflictError';
  }
}

/** A cluster's maintenance record as stored, and its version (1 for the first write). */
export interface StoredMaintenance {
  record: MaintenanceRecord;
  version: number;
}

/**
 * Maintenance's one record per cluster (core/maintenance/maintenance-record.ts), written whole
 * under a version as hygiene's is: a step is claimed by one delivery, and journaled once.
 */
export interface MaintenanceRecords {
  maintenanceRecord(clusterId: string): Promise<StoredMaintenance | undefined>;
  /** As saveHygieneRecord; throws MaintenanceConflictError when another write came first. */
  saveMaintenanceRecord(clusterId: string, record: MaintenanceRecord, expectVersion: number): Promise<number>;
}

export class MaintenanceConflictError extends RecordConflictError {
  constructor(clusterId: string, expectedVersion: number) {
    super('maintenance', clusterId, expectedVersion);
    this.name = 'MaintenanceConflictError';
  }
}

export interface DeadLetters {
  putDeadLetter(input: DeadLetterInput): Promise<DeadLetter>;
  /** Oldest first. */
  listDeadLetters(): Promise<DeadLetter[]>;
}

export interface RemediationLedger {
  /** Idempotent for the same (clusterId, targetKey, at). */
  recordRemediation(clusterId: string, targetKey: string, at: number): Promise<void>;
  remediationHistory(clusterId: string, targetKey: string, options: { minHealthyPeriodMs: number; now: number }): Promise<RemediationHistory>;
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
export interface IncidentStore
  extends
    IncidentRecords,
    IncidentJournal,
    ClusterIdentities,
    ClusterLocks,
    LearnerSightings,
    HygieneRecords,
    MaintenanceRecords,
    DeadLetters,
    RemediationLedger,
    FleetRecords {
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
