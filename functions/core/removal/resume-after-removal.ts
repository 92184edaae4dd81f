// An incident whose member is already out of etcd (marked removed, or gone from the list once
// remediate had begun) skips the planner: the rest of remediation resumes, a leader among the rest
// and the machine's replacement, unless the incident deadline has passed meanwhile (an election
// that never ends must not loop).
import { type Decision, type Evidence, decidedBy } from '../common/index.ts';
import { describeDuration } from '../view/index.ts';
import { pastIncidentDeadline, passingRowOn, waitsInARowAfter } from '../waits/index.ts';
import { lastApprovalIn, leaderMoveOf } from '../move/index.ts';
import type { Policy } from '../policy/index.ts';

export interface ResumeFacts {
  /** The target as the sentence names it. */
  who: string;
  openedAt: number;
  now: number;
  lastDecision?: Decision | undefined;
  /** The incident's journal: the approval that led to the removal is in it. */
  journal: Parameters<typeof lastApprovalIn>[0];
}

export function resumeAfterRemoval(facts: ResumeFacts, policy: Pick<Policy, 'incidentDeadlineMs'>): Decision {
  const { who, lastDecision: last, journal } = facts;
  const evidence: Evidence = { resumed: true, ...(last ? { lastReason: last.reason } : {}) };
  if (pastIncidentDeadline(facts.openedAt, facts.now, policy)) {
    return decidedBy(
      {
        kind: 'block',
        reason: 'INCIDENT_DEADLINE_EXCEEDED',
        message: `${who} is out of the member list, but remediation has not finished within the incident deadline of ${describeDuration(policy.incidentDeadlineMs)}${last ? ` (last: ${last.message.replace(/\.$/, '')})` : ''}; blocked, check that the remaining members have a leader and replace the machine by hand.`,
        evidence,
      },
      'resume-after-removal',
    );
  }
  // The approval that led to the removal, not whatever retry came after it.
  return decidedBy(
    {
      kind: 'approve',
      leaderMove: leaderMoveOf(journal, last),
      reason: lastApprovalIn(journal)?.reason ?? 'RUNTIME_RESUMED',
      message: `${who} is already out of the member list; remediation resumes where it stopped: wait for a leader among the rest, then replace the machine.`,
      // The look that found no leader yet is part of a row the next one goes on from.
      evidence: passingRowOn(evidence, waitsInARowAfter(last)),
    },
    'resume-after-removal',
  );
}
