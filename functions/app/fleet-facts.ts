// What the fleet's gates are given (core/fleet-gate.ts), read from the store and the directory:
// every pause, each cluster's newest opening within reach of the storm rule, the registered count.
import type { FleetFacts, GateContext } from '../core/fleet-gate.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import type { Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';

/**
 * Openings older than a few windows and cooldowns cannot hold a storm on now; only the storm's
 * "since" could reach further back, and a storm that long is named from within this reach.
 */
const REACH = 3;

export async function loadFleetFacts(deps: Deps, cluster: ClusterEntry): Promise<FleetFacts> {
  const { stormWindowMs, stormCooldownMs } = cluster.policy.fleet;
  const since = deps.clock.now() - REACH * (stormWindowMs + stormCooldownMs);
  const [pauses, opened, registeredClusters] = await Promise.all([deps.store.fleetPauses(), deps.store.openedSince(since), registeredCount(deps)]);
  return { pauses, opened, registeredClusters };
}

/** The directory's count; without one, every cluster that ever opened an incident in this store. */
async function registeredCount(deps: Deps): Promise<number> {
  if (deps.directory.registeredCount) return deps.directory.registeredCount();
  return (await deps.store.openedSince(Number.MIN_SAFE_INTEGER)).length;
}

export const gateContextOf = (deps: Pick<Deps, 'clock'>, cluster: ClusterEntry, incident: Incident): GateContext => ({
  clusterId: incident.clusterId,
  openedAt: incident.openedAt,
  now: deps.clock.now(),
  policy: cluster.policy,
  lastDecision: incident.lastDecision,
});
