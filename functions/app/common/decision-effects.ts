// What a decision writes and says: the incident patch (closing it when the decision ends it) and
// the event that carries it, for the step to commit together.
import type { Decision, Evidence, ReasonCode } from '../../core/common/index.ts';
import { incidentEndings, decisionStep, type Decider } from '../../core/incident/index.ts';
import { waitsOnMaintenance } from '../../core/maintenance/index.ts';
import type { Incident, IncidentOutcome, IncidentPatch, OutboxEntry } from '../../ports/incident-store.ts';
import { envelopeOf, iso, journaling, memberRef, publishing, resolvedTarget } from './incident-events.ts';

export interface Effects {
  patch: IncidentPatch;
  effects: OutboxEntry[];
}

export function decisionEffects(incident: Incident, decision: Decision, from: 'move-leader' | 'remediate', now: number): Effects {
  // move-leader carries a move out before it decides; only a bug gets one here.
  if (decision.kind === 'move-leader') throw new Error(`a move-leader decision is not an outcome (${decision.reason})`);
  const envelope = envelopeOf(incident, now);
  const { reason, message, evidence } = decision;
  const journal = journaling(now, { step: decisionStep(from, decision.kind), detail: { reason, message } });
  switch (decision.kind) {
    case 'approve':
      return {
        patch: { lastDecision: decision },
        effects: [
          journal,
          publishing('RemediationApproved', { ...envelope, target: memberRef(incident), leaderMove: decision.leaderMove, reason, message, evidence }),
        ],
      };
    case 'retry':
      return {
        patch: { lastDecision: decision },
        effects: [
          journal,
          publishing('RetryRequested', { ...envelope, retryAt: iso(decision.at), reason, message, reprobeNow: decision.reprobeNow, from }),
          // Asked again on every such retry: a run in flight goes on, one that ended starts again.
          ...(waitsOnMaintenance(reason)
            ? [publishing('MaintenanceDue', { clusterId: incident.clusterId, at: iso(now), askedBy: `incident:${incident.incidentId}` })]
            : []),
        ],
      };
    case 'block':
      return blockEffects(incident, decision, from, now);
    case 'close':
      return closeEffects(incident, decision, from, now);
  }
}

type Ending = Extract<Decision, { kind: 'block' | 'close' }>;

/** The state each ending decision leaves the incident in; its event is the endings table's. */
const stateAfter = { block: 'blocked', close: 'closed' } as const satisfies Record<Ending['kind'], IncidentOutcome>;

/**
 * Any step may end an incident: blocked (a person must act), or closed with nothing to do
 * (recovered, withdrawn, removed by another), which raises no alarm. The probe ends duplicates,
 * the on-failure path a step that never succeeded.
 */
function endingEffects(incident: Incident, decision: Ending, from: Decider, now: number): Effects {
  const { reason, message, evidence } = decision;
  const state = stateAfter[decision.kind];
  const { detailType } = incidentEndings[state];
  return {
    patch: { lastDecision: decision, state, result: decision },
    effects: [
      journaling(now, { step: decisionStep(from, decision.kind), detail: { reason, message } }),
      publishing(detailType, { ...envelopeOf(incident, now), target: resolvedTarget(incident), reason, message, evidence }),
    ],
  };
}

export const blockEffects = (incident: Incident, decision: Extract<Decision, { kind: 'block' }>, from: Decider, now: number): Effects =>
  endingEffects(incident, decision, from, now);

export const closeEffects = (incident: Incident, decision: Extract<Decision, { kind: 'close' }>, from: Decider, now: number): Effects =>
  endingEffects(incident, decision, from, now);

/**
 * The member is out of etcd but a later step failed for good: the incident ends as failed, and the
 * message says what a person must finish by hand.
 */
export function failureEffects(incident: Incident, failure: { reason: ReasonCode; message: string; evidence: Evidence }, now: number): Effects {
  return {
    patch: { state: 'failed', result: failure },
    effects: [
      journaling(now, { step: decisionStep('remediate', 'failed'), detail: { reason: failure.reason, message: failure.message } }),
      publishing(incidentEndings.failed.detailType, { ...envelopeOf(incident, now), target: resolvedTarget(incident), ...failure }),
    ],
  };
}
