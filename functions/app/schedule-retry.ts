// schedule-retry: advance the incident to its next attempt and ask the scheduler for a RetryDue.
import type { DetailOf } from '../../events/catalogue.ts';
import { waitingReasons } from '../core/decision.ts';
import type { Deps } from './deps.ts';
import { iso, oncePerAttempt } from './incident-events.ts';
import type { Incident } from '../ports/incident-store.ts';

/** Deterministic, so a redelivered RetryRequested schedules the same retry, not a second one. */
export const retryScheduleName = (incidentId: string, attempt: number): string => `${incidentId}-retry-${attempt}`;

export const scheduleRetry = (deps: Deps, detail: DetailOf<'RetryRequested'>): Promise<{ name: string; at: number } | undefined> =>
  oncePerAttempt(deps, detail, 'schedule-retry', (incident) => advance(deps, detail, incident));

async function advance(deps: Deps, detail: DetailOf<'RetryRequested'>, incident: Incident): Promise<{ name: string; at: number }> {
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
