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
  const [pauses, opened, registered] = await Promise.all([deps.store.fleetPauses(), deps.store.openedSince(since), registeredIds(deps)]);
  if (!registered) return { pauses, opened, registeredClusters: (await deps.store.openedSince(Number.MIN_SAFE_INTEGER)).length };
  // A state file may remember clusters no longer configured: only the registered ones count.
  const ids = new Set(registered);
  return { pauses, opened: opened.filter((o) => ids.has(o.clusterId)), registeredClusters: ids.size };
}

/** The directory's registered clusters; undefined when it cannot tell (then every cluster that ever opened an incident in this store counts). */
const registeredIds = async (deps: Deps): Promise<readonly string[] | undefined> => deps.directory.registeredClusterIds?.();

export const gateContextOf = (deps: Pick<Deps, 'clock'>, cluster: ClusterEntry, incident: Incident): GateContext => ({
  clusterId: incident.clusterId,
  openedAt: incident.openedAt,
  now: deps.clock.now(),
  policy: cluster.policy,
  lastDecision: incident.lastDecision,
});
