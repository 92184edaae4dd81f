// schedule-retry: advance the incident to its next attempt and ask the scheduler for a RetryDue.
import type { DetailOf } from '../../events/catalogue.ts';
import { waitingReasons } from '../core/decision.ts';
import type { Deps } from './deps.ts';
import { currentIncident, iso } from './incident-events.ts';

/** Deterministic, so a redelivered RetryRequested schedules the same retry, not a second one. */
export const retryScheduleName = (incidentId: string, attempt: number): string => `${incidentId}-retry-${attempt}`;

export async function scheduleRetry(deps: Deps, detail: DetailOf<'RetryRequested'>): Promise<{ name: string; at: number } | undefined> {
  const incident = await currentIncident(deps, detail, 'schedule-retry');
  if (!incident) return undefined;
  const now = deps.clock.now();
  const next = incident.attempt + 1;
  const at = detail.reprobeNow ? now : Math.max(now, Date.parse(detail.retryAt));
  const name = retryScheduleName(incident.incidentId, next);
  // Advanced first, so the RetryDue can never arrive before the incident expects it. A crash
  // before the timer is stored leaves an open incident without a timer: the runtime's recovery
  // sweep at start-up re-arms those.
  await deps.store.updateIncident(
    incident.incidentId,
    {
      attempt: next,
      waits: incident.waits + (waitingReasons.includes(detail.reason) ? 1 : 0),
      immediateReprobes: detail.reprobeNow ? incident.immediateReprobes + 1 : 0,
    },
    { expectVersion: incident.version, now },
  );
  await deps.scheduler.schedule({
    name,
    at,
    event: {
      detailType: 'RetryDue',
      detail: { incidentId: incident.incidentId, clusterId: incident.clusterId, attempt: next, at: iso(at), reason: detail.reason },
    },
  });
  await deps.store.appendJournal(incident.incidentId, {
    at: now,
    step: 'retry-scheduled',
    detail: `attempt ${next} at ${iso(at)} (${detail.reason})`,
  });
  return { name, at };
}
