// What the planner can decide, and the stable reason codes every outcome carries.
import type { MemberId, PathName } from './types.ts';

export type LeaderMove = 'not-needed' | 'moved' | 'skipped';

/** JSON-safe facts behind a decision: which member, which path, what etcd said. */
export type Evidence = Record<string, unknown>;

export const reasonCodes = [
  // approve
  'TARGET_IS_FOLLOWER',
  'TARGET_IS_LEARNER',
  'LEADER_MOVED',
  'LEADER_UNREACHABLE_PAST_GRACE',
  'LEADER_GONE',
  // the quorum gate passed (a gate result, not an outcome of its own)
  'QUORUM_SAFE',
  // move first
  'LEADER_MOVE_REQUIRED',
  // retry
  'LEADER_UNREACHABLE',
  'LEADER_UNREACHABLE_UNCONFIRMED',
  'ELECTION_IN_PROGRESS',
  'LEADER_CHANGED',
  'TRANSFEREE_UNFIT',
  'LEADER_TRANSFER_TIMEOUT',
  'ETCD_TRANSIENT',
  'PATH_REFUSED',
  'PATH_TIMEOUT',
  'REMEDIATION_RETRY_PERIOD',
  'UNKNOWN_ERROR',
  // block
  'QUORUM_AT_RISK',
  'NO_QUORUM',
  'LAST_MEMBER',
  'TARGET_NOT_FOUND',
  'CLUSTER_UNREACHABLE',
  'AUTH_FAILED',
  'TLS_FAILED',
  'NO_MOVE_CANDIDATE',
  'REMOVE_WITHOUT_MOVE_DISABLED',
  'NOT_ENOUGH_STARTED_MEMBERS',
  'MEMBER_NOT_FOUND',
  'ATTEMPTS_EXHAUSTED',
  'INCIDENT_DEADLINE_EXCEEDED',
  'MAX_RETRY_EXCEEDED',
  // operational
  'CLUSTER_LOCKED',
  'DRY_RUN',
  'RUNTIME_RESUMED',
  'SNAPSHOT_FAILED',
  'STEP_FAILED',
  // failed
  'ACTUATOR_FAILED',
] as const;

export type ReasonCode = (typeof reasonCodes)[number];

/**
 * Retries that wait for evidence or for a window to pass, not for a failed action to be tried
 * again. They spend no attempt of the budget: the incident deadline bounds them.
 */
export const waitingReasons: readonly ReasonCode[] = [
  'LEADER_UNREACHABLE',
  'LEADER_UNREACHABLE_UNCONFIRMED',
  'ELECTION_IN_PROGRESS',
  'REMEDIATION_RETRY_PERIOD',
  'CLUSTER_LOCKED',
  'RUNTIME_RESUMED',
];

interface Explained {
  reason: ReasonCode;
  /** One plain sentence: which member, which path failed and how, what happens next. */
  message: string;
  evidence: Evidence;
}

export type Decision =
  | (Explained & { kind: 'approve'; leaderMove: LeaderMove })
  | (Explained & { kind: 'move-leader'; leaderId: MemberId; candidates: MemberId[]; paths: PathName[] })
  | (Explained & { kind: 'retry'; at: number; reprobeNow: boolean })
  | (Explained & { kind: 'block' });

export type DecisionKind = Decision['kind'];
