// Turns a decision into the event that carries it, and records it on the incident.
import type { Decision, Evidence, ReasonCode } from '../core/decision.ts';
import type { Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';
import { envelopeOf, iso, memberRef, publish, resolvedTarget } from './incident-events.ts';

export async function publishDecision(
  deps: Deps,
  incident: Incident,
  decision: Decision,
  from: 'move-leader' | 'remediate',
): Promise<Decision> {
  // move-leader carries a move out before it publishes; only a bug gets one here.
  if (decision.kind === 'move-leader') throw new Error(`a move-leader decision is not an outcome (${decision.reason})`);
  const now = deps.clock.now();
  const envelope = envelopeOf(incident, now);
  const { reason, message, evidence } = decision;
  // Conditional first: a run that read a stale incident throws here and leaves no trace in the journal.
  const current = await deps.store.updateIncident(
    incident.incidentId,
    { lastDecision: decision },
    { expectVersion: incident.version, now },
  );
  await deps.store.appendJournal(incident.incidentId, { at: now, step: `${from}:${decision.kind}`, detail: `${reason}: ${message}` });
  switch (decision.kind) {
    case 'approve':
      await publish(deps, 'RemediationApproved', { ...envelope, target: memberRef(current), leaderMove: decision.leaderMove, reason, message, evidence });
      break;
    case 'retry':
      await publish(deps, 'RetryRequested', { ...envelope, retryAt: iso(decision.at), reason, message, reprobeNow: decision.reprobeNow, from });
      break;
    case 'block':
      await deps.store.closeIncident(incident.incidentId, { outcome: 'blocked', result: decision, now });
      await publish(deps, 'RemediationBlocked', { ...envelope, target: resolvedTarget(current), reason, message, evidence });
      break;
  }
  return decision;
}

/**
 * The member is out of etcd but a later step failed for good: the incident ends as failed, and the
 * message says what a person must finish by hand.
 */
export async function publishFailure(
  deps: Deps,
  incident: Incident,
  failure: { reason: ReasonCode; message: string; evidence: Evidence },
): Promise<void> {
  const now = deps.clock.now();
  await deps.store.appendJournal(incident.incidentId, { at: now, step: 'remediate:failed', detail: `${failure.reason}: ${failure.message}` });
  await deps.store.closeIncident(incident.incidentId, { outcome: 'failed', result: failure, now });
  await publish(deps, 'RemediationFailed', { ...envelopeOf(incident, now), target: resolvedTarget(incident), ...failure });
}
