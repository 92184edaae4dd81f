// schedule-retry: advance the incident to its next attempt and ask the scheduler for a RetryDue.
import type { DetailOf } from '../../../events/catalogue.ts';
import { journalSteps } from '../../core/incident/index.ts';
import { waitingReasons, type ReasonCode } from '../../core/common/index.ts';
import type { Incident, IncidentPatch, OutboxEntry } from '../../ports/incident-store.ts';
import { type Deps, iso, journaling, runStep } from '../common/index.ts';

export const scheduleRetry = (deps: Deps, detail: DetailOf<'RetryRequested'>): Promise<{ name: string; at: number } | undefined> =>
  runStep(deps, 'schedule-retry', { detailType: 'RetryRequested', detail }, async (incident) => {
    const now = deps.clock.now();
    const at = detail.reprobeNow ? now : Math.max(now, Date.parse(detail.retryAt));
    return { incident, ...advanceAttempt(incident, { reason: detail.reason, at, reprobeNow: detail.reprobeNow, kind: 'retry' }, now) };
  });

export interface Advance {
  reason: ReasonCode;
  at: number;
  reprobeNow: boolean;
  /** A retry asked for by a function, or a resume by the runtime after a crash or a failed step. */
  kind: 'retry' | 'resume';
}

/**
 * The incident's next attempt and the RetryDue that starts it, as a patch and an outbox: committed
 * together, so the timer is asked for even when the first try to schedule it fails. The timer's
 * name is deterministic, so scheduling the same attempt twice makes one timer. Waiting retries
 * (see waitingReasons) spend no attempt of the budget.
 */
export function advanceAttempt(
  incident: Incident,
  { reason, at, reprobeNow, kind }: Advance,
  now: number,
): { patch: IncidentPatch; effects: OutboxEntry[]; value: { name: string; at: number } } {
  const next = incident.attempt + 1;
  const name = `${incident.incidentId}-${kind}-${next}`;
  const patch: IncidentPatch = {
    attempt: next,
    waits: incident.waits + (waitingReasons.includes(reason) ? 1 : 0),
    immediateReprobes: reprobeNow ? incident.immediateReprobes + 1 : 0,
    // A step of the attempt left behind (its holder died) must not hold up the next one.
    inFlight: null,
  };
  const effects: OutboxEntry[] = [
    journaling(now, { step: kind === 'retry' ? journalSteps.retryScheduled : journalSteps.resumed, detail: { attempt: next, at: iso(at), reason } }),
    {
      kind: 'schedule',
      request: {
        name,
        at,
        event: { detailType: 'RetryDue', detail: { incidentId: incident.incidentId, clusterId: incident.clusterId, attempt: next, at: iso(at), reason } },
      },
    },
  ];
  return { patch, effects, value: { name, at } };
}
