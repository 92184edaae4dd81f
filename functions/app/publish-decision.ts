// Turns a decision into the event that carries it, and records it on the incident.
import type { Decision } from '../core/decision.ts';
import type { Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';
import { envelopeOf, iso, memberRef, publish, resolvedTarget } from './incident-events.ts';

export async function publishDecision(
  deps: Deps,
  incident: Incident,
  decision: Decision,
  from: 'move-leader' | 'remediate',
): Promise<Decision> {
  const now = deps.clock.now();
  const envelope = envelopeOf(incident, now);
  const { reason, message, evidence } = decision;
  await deps.store.appendJournal(incident.incidentId, { at: now, step: `${from}:${decision.kind}`, detail: `${reason}: ${message}` });
  const current = await deps.store.updateIncident(
    incident.incidentId,
    { lastDecision: decision },
    { expectVersion: incident.version, now },
  );
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
    case 'move-leader': {
      // Only a dry run leaves a move undone: say what would happen and stop.
      const dry: Decision = { kind: 'block', reason: 'DRY_RUN', message: `Dry run: ${message}`, evidence };
      await deps.store.closeIncident(incident.incidentId, { outcome: 'blocked', result: dry, now });
      await publish(deps, 'RemediationBlocked', { ...envelope, target: resolvedTarget(current), reason: dry.reason, message: dry.message, evidence });
      return dry;
    }
  }
  return decision;
}
