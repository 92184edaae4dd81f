// What a remediation request's status says: a function of its incident and the incident's journal
// alone, recomputed each round and on each of the incident's events, and written only where it
// differs from what the request shows (the watcher reconciles by level). Pure. How an ending reads
// (its phase, whether the decision's own words stand, whether the request goes on after it) is the
// endings table's.
import { endingOf, type IncidentEnding } from '../../functions/core/incident/index.ts';
import type { JournalEntry } from '../../functions/core/incident/index.ts';
import { leaderMoveSoFar } from '../../functions/core/move/index.ts';
import type { RequestStatus } from '../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';

type Said = Omit<RequestStatus, 'updatedAt'>;

/** An ending's status: its phase, and its own message where the table gives one (the reason code then stays the approval's). */
function endedAs(ending: IncidentEnding, words: { reasonCode?: string; message?: string }, completedAt: string | undefined): Said {
  const said = ending.requestMessage === undefined ? words : { message: ending.requestMessage };
  return { phase: ending.phase, ...said, ...(completedAt ? { completedAt } : {}) };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The status of an incident as it stands now. The journal says whether leadership was moved on an
 * earlier attempt, or which approval a later retry followed; without it, the last decision alone.
 */
export function statusOfIncident(incident: Incident, journal: readonly JournalEntry[] = []): Said {
  const decision = incident.lastDecision;
  const leaderMove = leaderMoveSoFar(journal, decision);
  const base = { incidentId: incident.incidentId, startedAt: iso(incident.openedAt), ...(leaderMove ? { leaderMove } : {}) };
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
