// The one wait after a failure: the incident's backoff (full jitter, doubling with each attempt
// spent), and the retry that says when it ends. The planner, the leader move, remediate, the
// guard's failures and a failed step all wait this way.
import { backoffDelay } from './backoff.ts';
import type { Decision, Evidence, ReasonCode } from '../common/index.ts';
import { describeTime } from '../view/index.ts';
import type { Policy } from '../policy/index.ts';

export interface BackoffInput {
  now: number;
  /** Attempts of the budget spent so far. */
  attempt: number;
  policy: Pick<Policy, 'backoff'>;
  random: () => number;
}

/** When a retry after the backoff runs. */
export const backoffRetryAt = ({ now, attempt, policy, random }: BackoffInput): number => now + backoffDelay(attempt, policy, random);

/** A retry at `at`; `said` gets the time as sentences write it, e.g. "…; we try again at 2026-01-01T00:00:01.000Z.". */
export const retryAfterBackoff = (
  reason: ReasonCode,
  at: number,
  said: (when: string) => string,
  evidence: Evidence,
): Extract<Decision, { kind: 'retry' }> => ({
  kind: 'retry',
  at,
  reprobeNow: false,
  reason,
  message: said(describeTime(at)),
  evidence,
});
