// schedule-retry: advance the incident to its next attempt and ask the scheduler for a RetryDue.
import type { DetailOf } from '../../events/catalogue.ts';
import { waitingReasons, type ReasonCode } from '../core/decision.ts';
import type { Deps } from './deps.ts';
import { iso, oncePerAttempt } from './incident-events.ts';
import type { Incident } from '../ports/incident-store.ts';

export const scheduleRetry = (deps: Deps, detail: DetailOf<'RetryRequested'>): Promise<{ name: string; at: number } | undefined> =>
  oncePerAttempt(deps, detail, 'schedule-retry', (incident) => {
    const now = deps.clock.now();
    const at = detail.reprobeNow ? now : Math.max(now, Date.parse(detail.retryAt));
    return advanceAttempt(deps, incident, { reason: detail.reason, at, reprobeNow: detail.reprobeNow, kind: 'retry' });
  });

export interface Advance {
  reason: ReasonCode;
  at: number;
  reprobeNow: boolean;
  /** A retry asked for by a function, or a resume by the runtime after a crash or a failed step. */
  kind: 'retry' | 'resume';
}

/**
 * Moves the incident to its next attempt and schedules the RetryDue that starts it. The timer's
 * name is deterministic, so scheduling the same attempt twice makes one timer. Waiting retries
 * (see waitingReasons) spend no attempt of the budget.
 */
export async function advanceAttempt(
  deps: Pick<Deps, 'store' | 'scheduler' | 'clock'>,
  incident: Incident,
  { reason, at, reprobeNow, kind }: Advance,
): Promise<{ name: string; at: number }> {
  const now = deps.clock.now();
  const next = incident.attempt + 1;
  const name = `${incident.incidentId}-${kind}-${next}`;
  // Advanced first, so the RetryDue can never arrive before the incident expects it. A crash
  // before the timer is stored leaves an open incident without a timer: the runtime's recovery
  // sweep at start-up re-arms those.
  await deps.store.updateIncident(
    incident.incidentId,
    {
      attempt: next,
      waits: incident.waits + (waitingReasons.includes(reason) ? 1 : 0),
      immediateReprobes: reprobeNow ? incident.immediateReprobes + 1 : 0,
    },
    { expectVersion: incident.version, now },
  );
  await deps.scheduler.schedule({
    name,
    at,
    event: { detailType: 'RetryDue', detail: { incidentId: incident.incidentId, clusterId: incident.clusterId, attempt: next, at: iso(at), reason } },
  });
  await deps.store.appendJournal(incident.incidentId, {
    at: now,
    step: kind === 'retry' ? 'retry-scheduled' : 'resumed',
    detail: `attempt ${next} at ${iso(at)} (${reason})`,
  });
  return { name, at };
}
