// remediate's fleet steps: nothing that changes a cluster runs while it is paused, and a removal
// holds one of the fleet's slots (maxRemovalsInFlight) from just before its record is written to
// the end of the step, whichever way it ends.
import type { Decision } from '../../core/common/index.ts';
import { pausedStep, removalsInFlight } from '../../core/fleet/index.ts';
import { FUNCTION_TIMEOUTS_MS } from '../../core/budget/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { Incident } from '../../ports/incident-store.ts';
import type { Deps } from '../common/index.ts';
import { gateContextOf, pauseSeen, pausesOf } from './fleet-facts.ts';
import { guardFailed } from './cluster-lock.ts';
import type { ClusterGuard } from '../../ports/cluster-guard.ts';

/**
 * PAUSED before any step of a remediation runs (a removal, the wait for a leader, the actuator),
 * by a pause in the store or in the cluster's etcd (read through the lock's guard); a wait when
 * the holds cannot be read; undefined when nothing holds it.
 */
export async function pausedRemediation(
  deps: Deps,
  cluster: ClusterEntry,
  incident: Incident,
  name: string,
  guard: ClusterGuard,
): Promise<Decision | undefined> {
  const held = {
    kind: 'approve' as const,
    reason: incident.lastDecision?.reason ?? 'RUNTIME_RESUMED',
    message: `the remediation of ${name} (its removal, the wait for a leader, the machine's replacement)`,
    evidence: {},
  };
  const seen = await pauseSeen(deps, cluster, guard);
  if (!seen.ok) return guardFailed(deps, cluster, incident, 'read the pauses and holds', seen, name);
  return seen.value && pausedStep(pausesOf(seen.value, cluster.clusterId), gateContextOf(deps, cluster, incident), held);
}

/**
 * A slot for this removal, or the decision to wait: REMOVALS_IN_FLIGHT when every slot is held,
 * PAUSED when a pause was written, in the store or the cluster's etcd, while the gates ran (read again once the slot is ours, so no
 * removal starts after a pause is written; the slot goes back when the step ends).
 * The lease is remediate's function timeout: a holder that died frees its slot then.
 */
export async function takeSlotForRemoval(
  deps: Deps,
  cluster: ClusterEntry,
  incident: Incident,
  name: string,
  approved: Decision,
  guard: ClusterGuard,
): Promise<Decision | undefined> {
  const slot = await deps.store.takeRemovalSlot({
    owner: incident.incidentId,
    clusterId: incident.clusterId,
    max: cluster.policy.fleet.maxRemovalsInFlight,
    leaseMs: FUNCTION_TIMEOUTS_MS.remediate,
    now: deps.clock.now(),
  });
  const ctx = gateContextOf(deps, cluster, incident);
  if (!slot.taken) return removalsInFlight(slot.holders, name, ctx);
  const seen = await pauseSeen(deps, cluster, guard);
  if (!seen.ok) return guardFailed(deps, cluster, incident, 'read the pauses and holds', seen, name);
  return seen.value && pausedStep(pausesOf(seen.value, cluster.clusterId), ctx, approved);
}

/** Best effort: a slot not given back is freed when its lease ends. */
export async function releaseRemovalSlot(deps: Deps, incidentId: string): Promise<void> {
  try {
    await deps.store.releaseRemovalSlot(incidentId);
  } catch (error) {
    deps.log.warn('removal slot not released; its lease frees it', { incidentId, error: String(error) });
  }
}
