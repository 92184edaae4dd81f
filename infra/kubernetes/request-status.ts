// What a remediation request's status says, from the incident's events and from the incident
// itself (for a request picked up again after a restart). Pure. How an ending reads (its phase,
// whether the decision's own words stand, whether the request goes on after it) is the endings
// table's, so both ways agree.
import { isTerminalEvent, type EventEnvelope } from '../../events/catalogue.ts';
import { endingOf, endingOfEvent, type IncidentEnding } from '../../functions/core/incident/index.ts';
import type { RequestStatus } from '../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';

type Said = Omit<RequestStatus, 'updatedAt'>;

interface Detail {
  reason?: string;
  message?: string;
  leaderMove?: string;
  at?: string;
  evidence?: Record<string, unknown>;
}

/** An ending's status: its phase, and its own message where the table gives one (the reason code then stays the approval's). */
function endedAs(ending: IncidentEnding, words: { reasonCode?: string; message?: string }, completedAt: string | undefined): Said {
  const said = ending.requestMessage === undefined ? words : { message: ending.requestMessage };
  return { phase: ending.phase, ...said, ...(completedAt ? { completedAt } : {}) };
}

/** The status an incident event puts on its request; undefined for events that change nothing a person reads. */
export function statusOfEvent(event: EventEnvelope): Said | undefined {
  const d = event.detail as Detail;
  const words = { ...(d.reason ? { reasonCode: d.reason } : {}), ...(d.message ? { message: d.message } : {}) };
  const leaderMove = d.leaderMove ? { leaderMove: d.leaderMove } : {};
  if (isTerminalEvent(event)) return { ...endedAs(endingOfEvent(event.detailType, d.reason), words, d.at), ...leaderMove };
  switch (event.detailType) {
    case 'RetryRequested':
      return { phase: 'Waiting', ...words };
    case 'RemediationApproved':
      return { phase: 'Running', ...words, ...leaderMove };
    case 'LeaderMoved':
      return { phase: 'Running', ...words, leaderMove: 'moved' };
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
  if (incident.state === 'open') return { ...base, phase: decision?.kind === 'retry' ? 'Waiting' : 'Running', ...words };
  // A completed incident keeps the approval's reason code beside the ending's own message.
  const ending = endingOf(incident.state, decision?.reason);
  return { ...base, ...words, ...endedAs(ending, words, iso(incident.updatedAt)) };
}

/**
 * How a request goes on after an incident that ended without ending it: in the incident that holds
 * its member (the ending's evidence names it), or reported again once Cluster API allows it.
 */
export type GoesOn = { kind: 'in-holder'; holderId?: string } | { kind: 'when-allowed' };

function goesOn(ending: IncidentEnding, evidence: Record<string, unknown> | undefined): GoesOn | undefined {
  if (ending.requestGoesOn === 'when-allowed') return { kind: 'when-allowed' };
  if (ending.requestGoesOn !== 'in-holder') return undefined;
  const holderId = evidence?.incidentId;
  return typeof holderId === 'string' && holderId !== '' ? { kind: 'in-holder', holderId } : { kind: 'in-holder' };
}

/** Undefined while the incident is open, or when its ending ends the request too. */
export const goesOnAfter = (incident: Incident): GoesOn | undefined =>
  incident.state === 'open' ? undefined : goesOn(endingOf(incident.state, incident.lastDecision?.reason), incident.lastDecision?.evidence);

export function goesOnAfterEvent(event: EventEnvelope): GoesOn | undefined {
  if (!isTerminalEvent(event)) return undefined;
  const d = event.detail as Detail;
  return goesOn(endingOfEvent(event.detailType, d.reason), d.evidence);
}
