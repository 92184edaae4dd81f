// Waits that only look again (the reason table's settledByResample: ELECTION_IN_PROGRESS,
// LEADER_UNREACHABLE_UNCONFIRMED). The first is one election timeout, enough for a fresh sample to
// settle it; each one in a row after it doubles, up to the backoff cap, so an election that never
// settles costs a dozen looks over the incident deadline rather than one per election timeout.
// Pure.
import type { Decision } from './decision.ts';
import type { Policy } from './policy.ts';
import { reasonRow } from './reason-table.ts';

/** The evidence field in which a resample wait says its place in the row, for the next look to read. */
export const WAITS_IN_A_ROW = 'waitsInARow';

type WaitPolicy = Pick<Policy, 'electionTimeoutMs' | 'backoff' | 'graceMs' | 'incidentDeadlineMs'>;

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

/** Resample waits in a row up to the incident's last decision: 0 when that was none. */
export function waitsInARowAfter(last: Decision | undefined): number {
  if (last?.kind !== 'retry' || !reasonRow(last.reason).settledByResample) return 0;
  const said = last.evidence[WAITS_IN_A_ROW];
  // One made where the row is not counted (after a leader move, say) is the first of its row.
  return typeof said === 'number' && Number.isInteger(said) && said > 0 ? said : 1;
}
