// The result of one incident, from its terminal event and what the store kept: shared by
// remediate, run and status.
import type { EventEnvelope, TerminalDetailType } from '../../events/catalogue.ts';
import { endingOfEvent, isDecisionLine, journalSteps, markerOf, type Election, timelineOf } from '../../functions/core/incident/index.ts';
import { leaderMoveOf } from '../../functions/core/move/index.ts';
import { describeSelector } from '../../functions/core/view/index.ts';
import type { Incident, IncidentStore, JournalEntry } from '../../functions/ports/incident-store.ts';
import { formatDuration } from './duration.ts';
import type { CliResult } from './output.ts';

/** An incident's last word: removed (awaiting its replacement), replaced, blocked, closed or failed. */
export type OutcomeEvent = EventEnvelope<TerminalDetailType>;

/** The leader-elected step's facts, as remediate journals them. */
export const electionOf = (journal: JournalEntry[]): Election | undefined => markerOf(journal, journalSteps.leaderElected)?.detail;

/** Said when no approval is on record: not a reason code, since nothing we kept says why. */
const REMEDIATED = 'REMEDIATED';

/**
 * Why a completed incident's member was removed: the last approval on record. The last decision
 * may be a retry made after it (an election still running), and a resume after a restart approves
 * as RUNTIME_RESUMED, which says nothing about why.
 */
function approvalOf(incident: Incident | undefined, journal: JournalEntry[]): { reason: string; evidence: Record<string, unknown> } {
  const last = incident?.lastDecision;
  if (last?.kind === 'approve' && last.reason !== 'RUNTIME_RESUMED') return { reason: last.reason, evidence: last.evidence };
  const approvals = journal.flatMap((e) => (isDecisionLine(e) && e.step.endsWith(':approve') ? [e.detail.reason] : []));
  const reason = approvals.filter((r) => r !== 'RUNTIME_RESUMED').at(-1);
  return { reason: reason ?? REMEDIATED, evidence: {} };
}

const describe = (m: { name: string; id: string }) => (m.name ? `${m.name} (${m.id})` : m.id);

function completedMessage(event: EventEnvelope<'RemediationCompleted'>, election: Election | undefined, approval: string): string {
  const { target, newLeader, leaderMove, clusterId } = event.detail;
  const how =
    leaderMove === 'skipped'
      ? 'without a leader move, since it could not be reached to hand over'
      : leaderMove === 'moved'
        ? 'after leadership was moved off it'
        : approval === 'TARGET_IS_LEARNER'
          ? 'as a learner, which neither leads nor votes, so no leader move was needed'
          : 'as a follower, with no leader move needed';
  const term = election?.term ? ` at term ${election.term}` : '';
  const after = election?.afterRemovalMs !== undefined ? `, ${formatDuration(election.afterRemovalMs)} after the removal` : '';
  return `${describe({ name: target.name, id: target.memberId })} was removed from cluster ${clusterId} ${how}; ${describe(newLeader)} leads now${term}${after}.`;
}

export async function resultOf(store: IncidentStore, event: OutcomeEvent): Promise<CliResult> {
  const { incidentId, clusterId } = event.detail;
  const incident = await store.getIncident(incidentId);
  const journal = await store.journal(incidentId);
  const timeline = timelineOf(journal);
  const memberId = incident?.memberId ?? ('memberId' in event.detail.target ? event.detail.target.memberId : undefined);
  const target = {
    memberId: memberId ?? '0',
    name: incident?.memberName ?? ('name' in event.detail.target ? (event.detail.target.name ?? '') : ''),
    // Never resolved to a member (no such member, a worker's Machine): what the report named.
    ...(memberId === undefined && incident ? { reportedAs: describeSelector(incident.target) } : {}),
  };
  if (event.detailType === 'RemediationCompleted') {
    const election = electionOf(journal);
    const approval = approvalOf(incident, journal);
    return {
      incidentId,
      clusterId,
      target,
      outcome: endingOfEvent(event.detailType).outcome,
      reason: approval.reason,
      message: completedMessage(event, election, approval.reason),
      leaderMove: event.detail.leaderMove,
      timeline,
      evidence: { ...approval.evidence, newLeader: { ...event.detail.newLeader, ...(election ?? {}) } },
    };
  }
  if (event.detailType === 'RemediationReplaced') {
    // Why the member was removed stays the approval's; the replacement's facts are the event's.
    const approval = approvalOf(incident, journal);
    const { removedAt, replacedAfterMs } = event.detail;
    return {
      incidentId,
      clusterId,
      target,
      outcome: endingOfEvent(event.detailType).outcome,
      reason: approval.reason,
      message: event.detail.message,
      leaderMove: leaderMoveOf(journal, incident?.lastDecision),
      timeline,
      evidence: { ...approval.evidence, ...event.detail.evidence, removedAt, replacedAfterMs, replacedBy: event.detail.reason },
    };
  }
  return {
    incidentId,
    clusterId,
    target,
    outcome: endingOfEvent(event.detailType, event.detail.reason).outcome,
    reason: event.detail.reason,
    message: event.detail.message,
    leaderMove: leaderMoveOf(journal, incident?.lastDecision),
    timeline,
    evidence: event.detail.evidence,
  };
}
