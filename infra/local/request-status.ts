// What a remediation request's status says, from the incident's events and from the incident
// itself (for a request picked up again after a restart). Pure.
import type { EventEnvelope } from '../../events/catalogue.ts';
import type { RequestPhase, RequestStatus } from '../../functions/adapters/kube/remediation-requests.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';

type Said = Omit<RequestStatus, 'updatedAt'>;

interface Detail {
  reason?: string;
  message?: string;
  leaderMove?: string;
  at?: string;
}

/** A closed incident's phase: the request withdrawn, or the member recovered by itself. */
const closedPhase = (reason: string | undefined): RequestPhase => (reason === 'REQUEST_WITHDRAWN' ? 'Cancelled' : 'Recovered');

/** The status an incident event puts on its request; undefined for events that change nothing a person reads. */
export function statusOfEvent(event: EventEnvelope): Said | undefined {
  const d = event.detail as Detail;
  const words = { ...(d.reason ? { reasonCode: d.reason } : {}), ...(d.message ? { message: d.message } : {}) };
  switch (event.detailType) {
    case 'RetryRequested':
      return { phase: 'Waiting', ...words };
    case 'RemediationApproved':
      return { phase: 'Running', ...words, ...(d.leaderMove ? { leaderMove: d.leaderMove } : {}) };
    case 'LeaderMoved':
      return { phase: 'Running', ...words, leaderMove: 'moved' };
    case 'RemediationCompleted':
      // The reason code stays the approval's (LEADER_MOVED, LEADER_GONE …): it says how.
      return { phase: 'Completed', message: 'the member was removed and a new leader stands; the Machine is being replaced', ...(d.leaderMove ? { leaderMove: d.leaderMove } : {}), ...(d.at ? { completedAt: d.at } : {}) };
    case 'RemediationBlocked':
      return { phase: 'Blocked', ...words, ...(d.at ? { completedAt: d.at } : {}) };
    case 'RemediationClosed':
      return { phase: closedPhase(d.reason), ...words, ...(d.at ? { completedAt: d.at } : {}) };
    case 'RemediationFailed':
      return { phase: 'Failed', ...words, ...(d.at ? { completedAt: d.at } : {}) };
    default:
      return undefined;
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The status of an incident as it stands now. */
export function statusOfIncident(incident: Incident): Said {
  const base = { incidentId: incident.incidentId, startedAt: iso(incident.openedAt) };
  const decision = incident.lastDecision;
  const words = decision ? { reasonCode: decision.reason, message: decision.message } : {};
  switch (incident.state) {
    case 'open':
      return { ...base, phase: decision?.kind === 'retry' ? 'Waiting' : 'Running', ...words };
    case 'remediated':
      return { ...base, phase: 'Completed', ...words, message: 'the member was removed and a new leader stands; the Machine is being replaced', completedAt: iso(incident.updatedAt) };
    case 'blocked':
      return { ...base, phase: 'Blocked', ...words, completedAt: iso(incident.updatedAt) };
    case 'closed':
      return { ...base, phase: closedPhase(decision?.reason), ...words, completedAt: iso(incident.updatedAt) };
    case 'failed':
      return { ...base, phase: 'Failed', ...words, completedAt: iso(incident.updatedAt) };
  }
}
