// Small helpers every step uses to read its incident and speak about it on the bus.
import type { DetailOf, DetailType, EventEnvelope } from '../../events/catalogue.ts';
import { makeEvent } from '../../events/catalogue.ts';
import type { Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';

export const iso = (at: number): string => new Date(at).toISOString();

/** The fields every detail carries, for this incident, now. */
export const envelopeOf = (incident: Incident, now: number) => ({
  incidentId: incident.incidentId,
  clusterId: incident.clusterId,
  attempt: incident.attempt,
  at: iso(now),
});

/** The incident's target as events carry it: the original selector plus the member it resolved to. */
export const resolvedTarget = (incident: Incident) => ({
  ...incident.target,
  ...(incident.memberId ? { memberId: incident.memberId } : {}),
  ...(incident.memberName !== undefined ? { name: incident.memberName } : {}),
});

export const memberRef = (incident: Incident) => ({ memberId: incident.memberId ?? '0', name: incident.memberName ?? '' });

/**
 * The open incident an event belongs to, or undefined when the event is stale: the incident was
 * closed, or it has moved on to a later attempt (a duplicate or late delivery).
 */
export async function currentIncident(
  deps: Deps,
  detail: { incidentId: string; attempt: number },
  step: string,
): Promise<Incident | undefined> {
  const incident = await deps.store.getIncident(detail.incidentId);
  if (!incident) {
    deps.log.warn(`${step}: incident not found; event ignored`, { incidentId: detail.incidentId });
    return undefined;
  }
  if (incident.state !== 'open' || incident.attempt !== detail.attempt) {
    deps.log.info(`${step}: stale event ignored`, {
      incidentId: incident.incidentId,
      state: incident.state,
      incidentAttempt: incident.attempt,
      eventAttempt: detail.attempt,
    });
    return undefined;
  }
  return incident;
}

export async function publish<T extends DetailType>(deps: Deps, detailType: T, detail: DetailOf<T>): Promise<EventEnvelope<T>> {
  const event = makeEvent(detailType, detail);
  await deps.bus.publish(event as EventEnvelope);
  return event;
}
