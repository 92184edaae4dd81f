// plan(): the whole decision for one target, from probe samples to approve / move / retry / block.
// Named preconditions run in order and the first that decides wins; if all pass, leadership decides.
import { clusterIdentityCheck } from './check-cluster-identity.ts';
import { disruptionCheck } from './check-disruption.ts';
import { noSpaceCheck } from './check-no-space.ts';
import { decidedBy, type Decision } from '../common/index.ts';
import { buildPlanContext, type PlanInput } from './plan-context.ts';
import { planChecks } from './plan-checks.ts';
import { decideLeadership } from './plan-leadership.ts';
import { fleetGate } from '../fleet/index.ts';

export type { PlanInput } from './plan-context.ts';

/**
 * Identity first: in a view of two clusters no other check means anything. Another disruption
 * after the quorum gate (it tightens it). Writability last, before any move.
 */
const checks = [clusterIdentityCheck, ...planChecks, disruptionCheck, noSpaceCheck];

export function plan(input: PlanInput): Decision {
  return withFleetGate(input, planCluster(input));
}

function planCluster(input: PlanInput): Decision {
  const ctx = buildPlanContext(input);
  for (const check of checks) {
    const result = check.run(ctx);
    if (result !== 'pass') return withCheck(result, check.name);
  }
  return withCheck(decideLeadership(ctx), 'leadership');
}

/** Last, on what the cluster alone would do: a pause holds a move or a removal, a storm a removal. */
function withFleetGate(input: PlanInput, decision: Decision): Decision {
  if (!input.fleet) return decision;
  const { clusterId, facts, lastDecision } = input.fleet;
  return fleetGate(decision, facts, { clusterId, openedAt: input.incident.openedAt, now: input.now, policy: input.policy, lastDecision });
}

/** Evidence names the check that decided, so an operator can find the rule. */
const withCheck = (d: Decision, check: string): Decision => decidedBy(d, check);

/** The leader's Node or Machine is known gone: approve without a move once the gates pass. */
export const approveLeaderGone = (input: PlanInput): Decision => plan({ ...input, targetGone: input.targetGone ?? 'its Node or Machine is gone' });
