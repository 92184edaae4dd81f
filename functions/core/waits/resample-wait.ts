// Waits that only look again (the reason table's settledByResample: ELECTION_IN_PROGRESS,
// LEADER_UNREACHABLE_UNCONFIRMED). The first is one election timeout, enough for a fresh sample to
// settle it; each one in a row after it doubles, up to the backoff cap, so an election that never
// settles costs a dozen looks over the incident deadline rather than one per election timeout.
// Pure.
import { type Decision, type Evidence, reasonRow } from '../common/index.ts';
import { describeDuration } from '../view/index.ts';
import type { Policy } from '../policy/index.ts';

/** The evidence field in which a resample wait says its place in the row, for the next look to read. */
export const WAITS_IN_A_ROW = 'waitsInARow';

export type WaitPolicy = Pick<Policy, 'electionTimeoutMs' | 'backoff' | 'graceMs' | 'incidentDeadlineMs'>;

/** How long the wait after `before` such waits in a row lasts: never under one election timeout, which the evidence rule needs between samples. */
export function resampleWaitMs(before: number, policy: Pick<Policy, 'electionTimeoutMs' | 'backoff'>): number {
  // Past 2^30 the cap has long won; bounding the exponent keeps the product finite.
  const exponent = Number.isNaN(before) ? 0 : Math.min(30, Math.max(0, Math.floor(before)));
  return Math.max(policy.electionTimeoutMs, Math.min(policy.backoff.capMs, policy.electionTimeoutMs * 2 ** exponent));
}

export interface ResampleFacts {
  now: number;
  openedAt: number;
  /** Resample waits in a row before this one. */
  before: number;
  /** Where the grace window counts from, when the target is in a leader-unreachable streak. */
  graceFrom?: number | undefined;
}

/**
 * When to look again: after the wait, but at the grace window's end or the incident deadline when
 * either comes first, so a grown wait never carries a look past them; and never sooner than one
 * election timeout, the least the evidence rule takes.
 */
export function resampleAt({ now, openedAt, before, graceFrom }: ResampleFacts, policy: WaitPolicy): number {
  const ends = [openedAt + policy.incidentDeadlineMs, ...(graceFrom === undefined ? [] : [graceFrom + policy.graceMs])];
  return Math.max(now + policy.electionTimeoutMs, Math.min(now + resampleWaitMs(before, policy), ...ends));
}

/** How a sentence says the wait to `at`: "one election timeout" the first time, else its length and place in the row. */
export function describeResampleWait(before: number, now: number, at: number, policy: Pick<Policy, 'electionTimeoutMs'>): string {
  return before === 0 && at === now + policy.electionTimeoutMs ? 'one election timeout' : `${describeDuration(at - now)} (look ${before + 1} in a row)`;
}

/** The count of a row a decision's evidence says in `field`: a positive whole number, else 0. */
export function rowSaidIn(evidence: Evidence | undefined, field: string): number {
  const said = evidence?.[field];
  return typeof said === 'number' && Number.isInteger(said) && said > 0 ? said : 0;
}

/**
 * Resample waits in a row up to the incident's last decision: 0 when that was none. An approval
 * settles nothing until it acts: remediate's gates under the lock, or a resume after the removal
 * finding no leader yet, go on from the row it was given, so the approval between two looks does
 * not start the row again.
 */
export function waitsInARowAfter(last: Decision | undefined): number {
  const counted = rowSaidIn(last?.evidence, WAITS_IN_A_ROW);
  if (last?.kind === 'approve') return counted;
  if (last?.kind !== 'retry' || !reasonRow(last.reason).settledByResample) return 0;
  // One made where the row is not counted (an older incident's, say) is the first of its row.
  return Math.max(1, counted);
}

/** An approval's evidence, with the row it was given for the step that acts on it. */
export const passingRowOn = (evidence: Evidence, row: number): Evidence => (row > 0 ? { ...evidence, [WAITS_IN_A_ROW]: row } : evidence);
