// Each decision event of an incident as a Kubernetes Event on its Machine, pure: the reason code as
// the Event's reason, the sentence as its note, Warning for blocks, failures, deferrals and an
// overdue replacement (Normal otherwise), and an action naming the step; or, read from a store, an
// incident's last decision.
import { stateReading } from '../../functions/core/incident/index.ts';
import type { EventEnvelope } from '../../events/catalogue.ts';
import { truncateNote, type EventType, type ObjectEventSaid } from '../../functions/core/kubernetes/index.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';

interface Said {
  reason?: string;
  message?: string;
}

/** The closes that hold a request back rather than end it: deferrals, so Warnings. */
const DEFERRING_CLOSES: readonly string[] = ['CLUSTER_PAUSED', 'REMEDIATION_NOT_ALLOWED', 'COMPETING_REMEDIATION'];

/** What each decision event says on its object, by detail type; events without a decision say nothing. */
export function kubeEventOf(event: EventEnvelope): ObjectEventSaid | undefined {
  if (event.detailType === 'LeaderMoved') {
    const { from, to, path, tookMs } = event.detail;
    return {
      reason: 'LEADER_MOVED',
      note: `etcd leadership moved from member ${from} to ${to} over ${path} in ${tookMs} ms`,
      type: 'Normal',
      action: 'MoveLeader',
    };
  }
  if (event.detailType === 'RemediationCompleted') {
    const { target, newLeader } = event.detail;
    const note = `etcd member ${target.name} (${target.memberId}) was removed and ${newLeader.name} (${newLeader.id}) leads; waiting for its replacement to join etcd`;
    return { reason: 'REPLACEMENT_AWAITED', note: truncateNote(note), type: 'Normal', action: 'RemoveMember' };
  }
  const { reason, message } = event.detail as Said;
  if (!reason || !message) return undefined;
  const said = (type: EventType, action: string): ObjectEventSaid => ({ reason, note: truncateNote(message), type, action });
  switch (event.detailType) {
    case 'RemediationApproved':
      return said('Normal', 'Approve');
    case 'RetryRequested':
      return said('Warning', 'Defer');
    case 'RemediationBlocked':
      return said('Warning', 'Block');
    case 'RemediationFailed':
      return said('Warning', 'Fail');
    case 'RemediationClosed':
      return said(DEFERRING_CLOSES.includes(reason) ? 'Warning' : 'Normal', 'Close');
    case 'RemediationReplaced':
      return said('Normal', 'CheckReplacement');
    case 'ReplacementOverdue':
      return said('Warning', 'CheckReplacement');
    case 'LearnerRemoved':
      return said('Normal', 'RemoveLearner');
    default:
      return undefined;
  }
}

const ACTIONS: Record<string, string> = { approve: 'Approve', 'move-leader': 'MoveLeader', retry: 'Defer', block: 'Block', close: 'Close' };

/**
 * The incident's last decision as an Event, for a watcher that reads incidents from their store
 * only (a deployed stack's table): a retry or block is a Warning, as is an incident that failed.
 */
export function kubeEventOfIncident(incident: Pick<Incident, 'state' | 'lastDecision'>): ObjectEventSaid | undefined {
  const decision = incident.lastDecision;
  if (!decision) return undefined;
  const reading = stateReading(incident.state, decision.reason);
  const warning = decision.kind === 'retry' || decision.kind === 'block' || reading.tone === 'bad' || DEFERRING_CLOSES.includes(decision.reason);
  const action =
    incident.state === 'failed' ? 'Fail' : reading.removed && incident.state !== 'completed' ? 'RemoveMember' : (ACTIONS[decision.kind] ?? 'Decide');
  const type: EventType = warning ? 'Warning' : 'Normal';
  return { reason: decision.reason, note: truncateNote(decision.message), type, action };
}
