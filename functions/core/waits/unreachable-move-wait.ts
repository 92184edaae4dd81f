// The wait after a leader move that reached the leader on no path (LEADER_UNREACHABLE from
// move-steps.ts). It spends no attempt of the budget, so the incident's backoff alone would never
// grow: a leader the probe reaches but no move does would be tried every few seconds until the
// deadline. Each such back-off in a row counts as one more attempt for the backoff instead.
// Pure.
import { backoffDelay } from './retry-after-backoff.ts';
import type { Decision } from '../common/index.ts';
import type { Policy } from '../policy/index.ts';
import { rowSaidIn } from './resample-wait.ts';

/** The evidence field in which such a retry says how many back-offs of its row came before the next one. */
export const UNREACHABLE_BACKOFFS_IN_A_ROW = 'unreachableBackoffsInARow';

/**
 * Back-offs in a row so far: those the last decision says, when it was a retry of a move that
 * reached no leader. The immediate re-probes between two back-offs pass the row on; any other
 * decision (the planner's grace-window wait too, which says no row) starts a new one.
 */
export function unreachableBackoffsAfter(last: Decision | undefined): number {
  if (last?.kind !== 'retry' || last.reason !== 'LEADER_UNREACHABLE') return 0;
  return rowSaidIn(last.evidence, UNREACHABLE_BACKOFFS_IN_A_ROW);
}

export interface UnreachableBackoffFacts {
  now: number;
  openedAt: number;
  /** Attempts of the budget spent: the first back-off of a row is the incident's own. */
  attempt: number;
  /** Back-offs in the row before this one. */
  before: number;
  random: () => number;
}

/** When to try again: the backoff (full jitter, up to backoff.capMs) of the attempts and the row, never past the incident deadline. */
export function unreachableBackoffAt(
  { now, openedAt, attempt, before, random }: UnreachableBackoffFacts,
  policy: Pick<Policy, 'backoff' | 'incidentDeadlineMs'>,
): number {
  const at = now + backoffDelay(attempt + before, policy, random);
  return Math.max(now, Math.min(at, openedAt + policy.incidentDeadlineMs));
}
