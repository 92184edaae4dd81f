// The incident store: the only thing the handlers share. Every write is one conditional write,
// so the same port maps onto DynamoDB (condition expressions) as well as onto SQLite.
import type { Decision } from '../core/decision.ts';
import type { CarriedStreak } from '../core/evidence.ts';
import type { ClusterView } from '../core/view.ts';

export type IncidentState = 'open' | 'remediated' | 'blocked' | 'failed';
export type IncidentOutcome = Exclude<IncidentState, 'open'>;

/** One remediation of one target member in one cluster. Times are epoch milliseconds. */
export interface Incident {
  incidentId: string;
  clusterId: string;
  /** Canonical form of `target`, e.g. "memberName=etcd-0"; see `targetKeyOf`. */
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
  memberName?: string;
  /** Recent cluster views, oldest first, at most MAX_INCIDENT_VIEWS. */
  views: ClusterView[];
  lastDecision?: Decision;
  /** When and at which term the target was first seen unreachable as leader, in the current streak. */
  leaderUnreachable?: CarriedStreak;
  result?: unknown;
  /** Bumped by every write; `updateIncident` is conditional on it. */
  version: number;
}

export const MAX_INCIDENT_VIEWS = 10;

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
  Pick<Incident, 'attempt' | 'waits' | 'immediateReprobes' | 'memberId' | 'memberName' | 'views' | 'lastDecision' | 'result'>
> & {
  /** null ends the streak. */
  leaderUnreachable?: CarriedStreak | null;
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

export interface RemediationHistory {
  lastRemediatedAt?: number;
  /**
   * Remediations in the current chain: each within minHealthyPeriod of the one before, the last
   * within minHealthyPeriod of now. 0 when the target has been healthy that long. The next
   * remediation would be retry number `retryCount`, so KCP parity blocks when retryCount > maxRetry.
   */
  retryCount: number;
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
  /** Throws VersionConflictError unless the stored version is `expectVersion`. */
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

/**
 * One delivery of an event per incident, attempt and function does the work: a duplicate (an
 * at-least-once bus, a redelivery) finds the claim taken and is ignored. A step that fails releases
 * its claim so the same event can be tried again; a crash leaves it, and the resume moves to the
 * next attempt.
 */
export interface DeliveryClaims {
  /** True only for the first caller with this key. */
  claim(incidentId: string, key: string, at: number): Promise<boolean>;
  releaseClaim(incidentId: string, key: string): Promise<void>;
}

export interface ClusterLocks {
  /** Succeeds when the lock is free, its lease has expired, or `owner` holds it (renewing the lease). */
  acquireLock(clusterId: string, owner: string, leaseMs: number, now: number): Promise<boolean>;
  /** Only the owner can release; true when it did. */
  releaseLock(clusterId: string, owner: string): Promise<boolean>;
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

export interface IncidentStore extends IncidentRecords, IncidentJournal, DeliveryClaims, ClusterLocks, DeadLetters, RemediationLedger, TimerStore {
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

/** The selector an event gives, its unset fields dropped, as the store keeps it. */
export const selectorOf = (target: Partial<Record<string, string | undefined>>): Record<string, string> =>
  Object.fromEntries(Object.entries(target).filter((e): e is [string, string] => e[1] !== undefined));

/** Canonical target key: keys sorted, "k=v" joined by ",", so equal targets give equal keys. */
export const targetKeyOf = (target: Record<string, string>): string =>
  Object.keys(target)
    .sort()
    .map((k) => `${k}=${target[k]}`)
    .join(',');

/** Appends a view and keeps the newest MAX_INCIDENT_VIEWS, oldest first. */
export const withView = (views: ClusterView[], view: ClusterView): ClusterView[] =>
  [...views, view].slice(-MAX_INCIDENT_VIEWS);

/**
 * KCP's retry count from remediation times (any order). Remediations chain while each follows the
 * one before within minHealthyPeriod; a gap longer than that, up to now, starts a fresh count.
 */
export function remediationHistoryFrom(
  times: readonly number[],
  options: { minHealthyPeriodMs: number; now: number },
): RemediationHistory {
  const newestFirst = [...times].sort((a, b) => b - a);
  const last = newestFirst[0];
  if (last === undefined) return { retryCount: 0 };
  if (options.now - last > options.minHealthyPeriodMs) return { lastRemediatedAt: last, retryCount: 0 };
  let retryCount = 1;
  while (retryCount < newestFirst.length && newestFirst[retryCount - 1]! - newestFirst[retryCount]! <= options.minHealthyPeriodMs) {
    retryCount++;
  }
  return { lastRemediatedAt: last, retryCount };
}
