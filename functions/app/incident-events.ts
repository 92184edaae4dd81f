// Small helpers every step uses to read its incident and speak about it on the bus.
import type { DetailOf, DetailType, EventEnvelope } from '../../events/catalogue.ts';
import { makeEvent } from '../../events/catalogue.ts';
import { describeTime } from '../core/explain.ts';
import type { Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';

/** Events and the journal speak ISO-8601, as the planner's sentences do. */
export const iso = describeTime;

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

/**
 * Runs `work` once for this incident, attempt and step: a duplicate delivery of the same event
 * finds the claim taken and is ignored. If `work` throws, the claim is released so the event can be
 * tried again; a crash leaves it taken, and the runtime resumes at the next attempt.
 */
export async function oncePerAttempt<R>(
  deps: Deps,
  detail: { incidentId: string; attempt: number },
  step: string,
  work: (incident: Incident) => Promise<R>,
): Promise<R | undefined> {
  const incident = await currentIncident(deps, detail, step);
  if (!incident) return undefined;
  return claimed(deps, incident, step, () => work(incident));
}

/** The claim half of oncePerAttempt, for an incident already in hand. */
export async function claimed<R>(deps: Deps, incident: Incident, step: string, work: () => Promise<R>): Promise<R | undefined> {
  const key = `${step}@${incident.attempt}`;
  if (!(await deps.store.claim(incident.incidentId, key, deps.clock.now()))) {
    deps.log.info(`${step}: duplicate delivery ignored`, { incidentId: incident.incidentId, attempt: incident.attempt });
    return undefined;
  }
  try {
    return await work();
  } catch (error) {
    await deps.store.releaseClaim(incident.incidentId, key);
    throw error;
  }
}

export async function publish<T extends DetailType>(deps: Deps, detailType: T, detail: DetailOf<T>): Promise<EventEnvelope<T>> {
  const event = makeEvent(detailType, detail);
  await deps.bus.publish(event as EventEnvelope);
  return event;
}
