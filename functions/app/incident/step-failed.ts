// When every delivery of an event failed (Lambda's retries, or the local bus's), the incident must
// not wait for an event that will never come: carry out what is owed, then resume it at its next
// attempt after a back-off (spending an attempt), or, with the budget or deadline spent, or nothing
// schedulable, block it saying which step failed and how. The rule is core's (step-failed.ts).
import { incidentIdOf, type EventEnvelope, type FunctionName } from '../../../events/catalogue.ts';
import type { Decision } from '../../core/common/index.ts';
import { journalSteps, stepFailedBlock, stepFailedDecision, type StepFailedFacts } from '../../core/incident/index.ts';
import { defaultPolicy } from '../../core/policy/index.ts';
import { describeSelector, selectorOf, targetKeyOf, describeMember } from '../../core/view/index.ts';
import { UnknownClusterError } from '../../ports/cluster-directory.ts';
import { VersionConflictError, type Incident } from '../../ports/incident-store.ts';
import { blockEffects, type Deps, iso, journaling, attemptsSpent, nextTryAt, commit, flushLeftOutbox, flushOutbox } from '../common/index.ts';
import { advanceAttempt } from './schedule-retry.ts';

export type StepFailedOutcome = 'resumed' | 'blocked' | 'moved-on' | 'unknown-incident';

export async function stepFailed(deps: Deps, functionName: FunctionName, event: EventEnvelope, error: unknown): Promise<StepFailedOutcome> {
  const found = await incidentOf(deps, event);
  if (!found) return 'unknown-incident';
  // Only the periodic learner check's events go without an attempt, and they have no incident.
  const attempt = ('attempt' in event.detail ? event.detail.attempt : undefined) ?? found.attempt;
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
  const failed = { functionName, detailType: event.detailType, attempt, error: said };
  const known = { ...targetOf(incident), openedAt: incident.openedAt, attemptsSpent: attemptsSpent(incident), incidentAttempt: incident.attempt };
  // An entry the directory refuses (say, a policy edited past a Lambda timeout) fails every step
  // alike, and leaves no policy to resume under: the incident blocks, saying why.
  const cluster = await deps.directory.get(incident.clusterId).catch((readError: unknown) => {
    if (readError instanceof UnknownClusterError) throw readError;
    return undefined;
  });
  const now = deps.clock.now();
  if (!cluster)
    return block(
      deps,
      incident,
      stepFailedBlock(failed, { ...known, now, resumeAt: now, resumable: false, entryUnread: true }, defaultPolicy),
      functionName,
      now,
    );
  const facts: StepFailedFacts = { ...known, now, resumeAt: nextTryAt(deps, cluster, incident), resumable: true };
  const verdict = stepFailedDecision(failed, facts, cluster.policy);
  if (verdict.kind === 'retry') {
    const at = verdict.at;
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
  return block(deps, incident, verdict.kind === 'block' ? verdict : stepFailedBlock(failed, { ...facts, resumable: false }, cluster.policy), functionName, now);
}

async function block(
  deps: Deps,
  incident: Incident,
  decision: Extract<Decision, { kind: 'block' }>,
  functionName: FunctionName,
  now: number,
): Promise<StepFailedOutcome> {
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

/** The target as sentences name it, and as the incident's newest view saw it. */
function targetOf(incident: Incident): Pick<StepFailedFacts, 'target' | 'lastSeen'> {
  const target = incident.memberId ? describeMember({ id: incident.memberId, name: incident.memberName ?? '' }) : describeSelector(incident.target);
  const lastSeen = incident.memberId ? incident.views.at(-1)?.members.find((m) => m.id === incident.memberId) : undefined;
  return { target, lastSeen };
}

const latest = async (deps: Deps, incident: Incident): Promise<Incident> => (await deps.store.getIncident(incident.incidentId)) ?? incident;

/** The incident an event speaks of; a MemberUnhealthy without an id, by its cluster and target. */
async function incidentOf(deps: Deps, event: EventEnvelope): Promise<Incident | undefined> {
  const incidentId = incidentIdOf(event);
  if (incidentId !== undefined) return deps.store.getIncident(incidentId);
  if (event.detailType !== 'MemberUnhealthy') return undefined;
  const key = targetKeyOf(selectorOf(event.detail.target));
  return (await deps.store.listIncidents({ clusterId: event.detail.clusterId, state: 'open' })).find((i) => i.targetKey === key);
}
