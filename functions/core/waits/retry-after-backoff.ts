// The one wait after a failure: the incident's backoff (full jitter, doubling with each attempt
// spent), and the retry that says when it ends. The planner, the leader move, remediate, the
// guard's failures and a failed step all wait this way.
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

// Exponential backoff with full jitter: spreads retries of many incidents over the whole window.
/** random() * min(cap, base * 2^attempt), in whole milliseconds; `random` returns [0, 1). */
export function backoffDelay(attempt: number, policy: Pick<Policy, 'backoff'>, random: () => number): number {
  const { baseMs, capMs } = policy.backoff;
  // Past 2^52 the cap has long won; bounding the exponent keeps 0 * 2^n finite.
  const exponent = Number.isNaN(attempt) ? 0 : Math.min(52, Math.max(0, Math.floor(attempt)));
  const ceiling = Math.min(capMs, baseMs * 2 ** exponent);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * ceiling);
}
