// The leader-move label an incident's outcome carries, from what was done and what was decided:
// one rule for the RemediationCompleted event and for the CLI's result of any outcome.
import type { Decision, LeaderMove } from './decision.ts';
import { isReasonCode, type ReasonCode } from './reason-table.ts';

/** The journal step move-leader writes when leadership moved off the target. */
export const LEADER_MOVED_STEP = 'leader-moved';

/**
 * The marker move-leader writes (as `leader-move-made@ATTEMPT`) the moment a move is made and
 * verified, before the commit that journals LEADER_MOVED_STEP: a crash in between leaves only it.
 */
export const LEADER_MOVE_MADE_STEP = 'leader-move-made';

const movedIn = (step: string): boolean => step === LEADER_MOVED_STEP || step.startsWith(`${LEADER_MOVE_MADE_STEP}@`);

export function leaderMoveOf(journal: readonly { step: string; detail?: unknown }[], lastDecision: Decision | undefined): LeaderMove {
  // A move made on an earlier attempt still counts, though a re-approval found a follower.
  if (journal.some((e) => movedIn(e.step))) return 'moved';
  if (lastDecision?.kind === 'approve') return lastDecision.leaderMove;
  // A retry after the removal (an election) is the last decision now: the approval before it says.
  // With none, nothing was done to leadership, as for an incident blocked before any approval.
  // 'skipped' would claim a leader was removed without a move, and only an approval decides that.
  return lastApprovalIn(journal)?.leaderMove ?? 'not-needed';
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

/**
 * The last approval journaled ("move-leader:approve", "REASON: message"), as reason and label. A
 * resume after the removal needs it: by then the incident's last decision may be a later retry.
 */
export function lastApprovalIn(journal: readonly { step: string; detail?: unknown }[]): { reason: ReasonCode; leaderMove: LeaderMove } | undefined {
  for (const entry of [...journal].reverse()) {
    if (entry.step !== 'move-leader:approve' || typeof entry.detail !== 'string') continue;
    const reason = entry.detail.slice(0, entry.detail.indexOf(':'));
    const leaderMove = isReasonCode(reason) ? labelOfApproval[reason] : undefined;
    if (isReasonCode(reason) && leaderMove) return { reason, leaderMove };
  }
  return undefined;
}
