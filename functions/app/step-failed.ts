// When every delivery of an event failed (Lambda's retries, or the local bus's), the incident must
// not wait for an event that will never come: carry out what is owed, then resume it at its next
// attempt after a back-off (spending an attempt), or, with the budget or deadline spent, or nothing
// schedulable, block it saying which step failed and how.
import type { EventEnvelope, FunctionName } from '../../events/catalogue.ts';
import { backoffDelay } from '../core/backoff.ts';
import type { Decision } from '../core/decision.ts';
import { describeDuration } from '../core/explain.ts';
import { journalSteps } from '../core/journal.ts';
import { selectorOf, targetKeyOf } from '../core/target.ts';
import { VersionConflictError, type Incident } from '../ports/incident-store.ts';
import { blockEffects } from './decision-effects.ts';
import type { Deps } from './deps.ts';
import { iso, journaling } from './incident-events.ts';
import { attemptsSpent } from './plan-incident.ts';
import { advanceAttempt } from './schedule-retry.ts';
import { commit, flushLeftOutbox, flushOutbox } from './step.ts';

export type StepFailedOutcome = 'resumed' | 'blocked' | 'moved-on' | 'unknown-incident';

export async function stepFailed(deps: Deps, functionName: FunctionName, event: EventEnvelope, error: unknown): Promise<StepFailedOutcome> {
  const found = await incidentOf(deps, event);
  if (!found) return 'unknown-incident';
  const attempt = event.detail.attempt;
  let incident = found;
  try {
    // Not the failed event itself: published again, it would fail again, for as long as the outage lasts.
    incident = await flushLeftOutbox(deps, found, { detailType: event.detailType, detail: { incidentId: found.incidentId, attempt, at: event.detail.at } });
  } catch (flushError) {
    deps.log.warn('outbox not carried out', { incidentId: found.incidentId, error: String(flushError) });
  }
  // Closed, or a later attempt is under way and owes nothing: the failed event stranded nothing.
  if (incident.state !== 'open' || (incident.attempt !== attempt && incident.outbox.length === 0)) return 'moved-on';

  const said = error instanceof Error ? error.message : String(error);
  const cluster = await deps.directory.get(incident.clusterId);
  const now = deps.clock.now();
  const spent = attemptsSpent(incident) + 1 >= cluster.policy.maxAttempts;
  const late = now - incident.openedAt >= cluster.policy.incidentDeadlineMs;
  if (!spent && !late) {
    const at = now + backoffDelay(attemptsSpent(incident), cluster.policy, deps.random);
    try {
      const advance = advanceAttempt(incident, { reason: 'STEP_FAILED', at, reprobeNow: false, kind: 'resume' }, now);
      const why = journaling(now, {
        step: journalSteps.stepFailed,
        detail: { functionName, detailType: event.detailType, attempt, error: said, resumedAttempt: incident.attempt + 1, at: iso(at) },
      });
      await flushOutbox(deps, await commit(deps, incident, advance.patch, [why, ...advance.effects]));
      return 'resumed';
    } catch (resumeError) {
      if (resumeError instanceof VersionConflictError) return 'moved-on';
      deps.log.error('cannot resume the incident; blocking it', { incidentId: incident.incidentId, error: String(resumeError) });
    }
  }
  const budget = late ? `the incident deadline of ${describeDuration(cluster.policy.incidentDeadlineMs)} has passed` : spent ? `the attempt budget of ${cluster.policy.maxAttempts} is spent` : 'it could not be scheduled again';
  const decision: Extract<Decision, { kind: 'block' }> = {
    kind: 'block',
    reason: 'STEP_FAILED',
    message: `The ${functionName} step failed on every delivery of ${event.detailType} (attempt ${attempt}): ${said}; blocked, since ${budget}. Nothing more was done; fix the cause, then report the member again.`,
    evidence: { functionName, detailType: event.detailType, attempt, error: said },
  };
  const { patch, effects } = blockEffects(incident, decision, functionName, now);
  try {
    const closed = await commit(deps, await latest(deps, incident), patch, effects);
    await flushOutbox(deps, closed).catch((flushError: unknown) =>
      deps.log.error('blocked, but the outcome was not published; it is kept in the outbox', { incidentId: incident.incidentId, error: String(flushError) }),
    );
    return 'blocked';
  } catch (blockError) {
    if (blockError instanceof VersionConflictError) return 'moved-on';
    throw blockError;
  }
}

const latest = async (deps: Deps, incident: Incident): Promise<Incident> => (await deps.store.getIncident(incident.incidentId)) ?? incident;

/** The incident an event speaks of; a MemberUnhealthy without an id, by its cluster and target. */
async function incidentOf(deps: Deps, event: EventEnvelope): Promise<Incident | undefined> {
  if (event.detail.incidentId !== undefined) return deps.store.getIncident(event.detail.incidentId);
  if (event.detailType !== 'MemberUnhealthy') return undefined;
  const key = targetKeyOf(selectorOf(event.detail.target));
  return (await deps.store.listIncidents({ clusterId: event.detail.clusterId, state: 'open' })).find((i) => i.targetKey === key);
}
