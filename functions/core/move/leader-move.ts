// The leader-move label an incident's outcome carries, from what was done and what was decided:
// one rule for the RemediationCompleted event and for the CLI's result of any outcome.
import type { Decision, LeaderMove, ReasonCode } from '../common/index.ts';
import { decisionStep, isDecisionLine, isMoveMadeStep, journalSteps, type JournalEntry } from '../incident/index.ts';

/** A move journaled, or only marked made: a crash between the marker and its commit leaves the marker alone. */
const movedIn = (step: string): boolean => step === journalSteps.leaderMoved || isMoveMadeStep(step);

export const leaderMoveOf = (journal: readonly JournalEntry[], lastDecision: Decision | undefined): LeaderMove =>
  // With no approval, nothing was done to leadership, as for an incident blocked before any approval.
  leaderMoveSoFar(journal, lastDecision) ?? 'not-needed';

/**
 * What was done or decided about leadership so far; undefined before any approval (an incident
 * still probing, or blocked before one). 'skipped' would claim a leader was removed without a
 * move, and only an approval decides that.
 */
export function leaderMoveSoFar(journal: readonly JournalEntry[], lastDecision: Decision | undefined): LeaderMove | undefined {
  // A move made on an earlier attempt still counts, though a re-approval found a follower.
  if (journal.some((e) => movedIn(e.step))) return 'moved';
  if (lastDecision?.kind === 'approve') return lastDecision.leaderMove;
  // A retry after the removal (an election) is the last decision now: the approval before it says.
  return lastApprovalIn(journal)?.leaderMove;
}

/** The label each approving reason carries, for an approval known only from its journal line. */
const labelOfApproval: Partial<Record<ReasonCode, LeaderMove>> = {
  LEADER_MOVED: 'moved',
  TARGET_IS_FOLLOWER: 'not-needed',
  TARGET_IS_LEARNER: 'not-needed',
  LEADER_UNREACHABLE_PAST_GRACE: 'skipped',
  LEADER_GONE: 'skipped',
  MEMBER_ALREADY_REMOVED: 'not-needed',
};

const APPROVED = decisionStep('move-leader', 'approve');

/**
 * The last approval move-leader journaled, as reason and label. A resume after the removal needs
 * it: by then the incident's last decision may be a later retry.
 */
export function lastApprovalIn(journal: readonly JournalEntry[]): { reason: ReasonCode; leaderMove: LeaderMove } | undefined {
  for (const entry of [...journal].reverse()) {
    if (!isDecisionLine(entry) || entry.step !== APPROVED) continue;
    const { reason } = entry.detail;
    const leaderMove = labelOfApproval[reason];
    if (leaderMove) return { reason, leaderMove };
  }
  return undefined;
}
