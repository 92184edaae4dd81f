// What the fleet's gates are given (core/fleet/fleet-gate.ts), read from the store and the directory:
// every pause, each cluster's newest opening within reach of the storm rule, the registered count;
// and, joined to them, the holds kept in the cluster's own etcd, which every remediator of it sees.
import {
  sameStorm,
  stormHoldOf,
  withClusterHolds,
  type StormHold,
  pauseOf,
  stormHolding,
  stormHoldsMessage,
  stormNow,
  type FleetFacts,
  type FleetMark,
  type FleetPauses,
  type GateContext,
} from '../../core/fleet/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { ClusterGuard } from '../../ports/cluster-guard.ts';
import type { Incident } from '../../ports/incident-store.ts';
import { clusterGuard, guarded, type Guarded } from './cluster-lock.ts';
import type { ClusterView } from '../../core/view/index.ts';
import type { EtcdFailure } from '../../core/common/index.ts';
import type { ClusterDeps, Deps } from '../common/index.ts';

/**
 * Openings older than a few windows and cooldowns cannot hold a storm on now; only the storm's
 * "since" could reach further back, and a storm that long is named from within this reach.
 */
const REACH = 3;

/**
 * The store's facts. The fleet is what the store knows of it, never the scope of the command that
 * asks: the clusters of the store's roster (every cluster a remediator of this store was given;
 * `run` sets it to its configuration) with the directory's own. A store that knows no fleet beyond
 * the one cluster (a lone `remediate` with a new state file) counts one: no storm can be seen from
 * there, and only a storm hold another remediator wrote into the cluster's etcd holds it.
 */
export async function loadFleetFacts(deps: Deps, cluster: ClusterEntry): Promise<FleetFacts> {
  const { stormWindowMs, stormCooldownMs } = cluster.policy.fleet;
  const since = deps.clock.now() - REACH * (stormWindowMs + stormCooldownMs);
  const given = await registeredIds(deps);
  if (given) await deps.store.noteFleet(given, { replace: false });
  const [pauses, opened, roster] = await Promise.all([deps.store.fleetPauses(), deps.store.openedSince(since), deps.store.fleetRoster()]);
  const registered = [...(given ?? []), ...roster];
  if (registered.length === 0) return { pauses, opened, registeredClusters: (await deps.store.openedSince(Number.MIN_SAFE_INTEGER)).length };
  // A state file may remember clusters no longer in its fleet: only the registered ones count.
  const ids = new Set(registered);
  return { pauses, opened: opened.filter((o) => ids.has(o.clusterId)), registeredClusters: ids.size };
}

/** The directory's registered clusters; undefined when it cannot tell (then the store's roster, else every cluster that ever opened an incident in it, counts). */
const registeredIds = async (deps: Deps): Promise<readonly string[] | undefined> => deps.directory.registeredClusterIds?.();

/**
 * The store's facts with the holds in the cluster's etcd, read through `guard`. No guard (a
 * single-remediator cluster keeps its holds in the store) is the store's facts alone; holds that
 * cannot be read are no answer, for the caller to wait on, never "no hold": the failure, with the
 * store's facts alone for a decision that changes nothing.
 */
export async function fleetFactsWithHolds(
  deps: Deps,
  cluster: ClusterEntry,
  guard: ClusterGuard | undefined,
): Promise<{ ok: true; value: FleetFacts } | { ok: false; failure: EtcdFailure; where: string; storeFacts: FleetFacts }> {
  const facts = await loadFleetFacts(deps, cluster);
  if (cluster.policy.singleRemediator) return { ok: true, value: facts };
  const holds = await guarded(guard, (g) => g.holds());
  if (!holds.ok) return { ...holds, storeFacts: facts };
  await keepStormHeld(deps, cluster, facts, guard!, holds.value.storm);
  return { ok: true, value: withClusterHolds(facts, cluster.clusterId, holds.value) };
}

/** The pause that holds this cluster, in its store or its etcd; `undefined` when none, a failure when the holds cannot be read. */
export async function pauseSeen(deps: Deps, cluster: ClusterEntry, guard: ClusterGuard | undefined): Promise<Guarded<ReturnType<typeof pauseOf>>> {
  const pauses = await deps.store.fleetPauses();
  const own = pauseOf(pauses, cluster.clusterId);
  if (own || cluster.policy.singleRemediator) return { ok: true, value: own };
  const holds = await guarded(guard, (g) => g.holds());
  if (!holds.ok) return holds;
  const joined: FleetPauses = withClusterHolds({ pauses, opened: [], registeredClusters: 0 }, cluster.clusterId, holds.value).pauses;
  return { ok: true, value: pauseOf(joined, cluster.clusterId) };
}

/**
 * While the store sees a storm, the clusters it judges carry it in their etcd, so a remediator of
 * another store holds too; the hold lifts by itself at its liftsAt, is rewritten only when the
 * storm says more, and is lifted by this store once its storm is over. Best effort: a hold not
 * written leaves this store's own gate as it was.
 */
async function keepStormHeld(deps: Deps, cluster: ClusterEntry, facts: FleetFacts, guard: ClusterGuard, written: StormHold | undefined): Promise<void> {
  const now = deps.clock.now();
  const storm = stormNow(facts, cluster.policy.fleet, now);
  // Level, not edge: a hold this store wrote goes once its storm is over here (ended by hand, say).
  const stale = !storm && written !== undefined && written.where === deps.store.where;
  if (!stale && (!storm || sameStorm(written, storm))) return;
  try {
    await guard.setHold('storm', storm ? stormHoldOf(storm, deps.store.where, now) : null);
  } catch (error) {
    deps.log.warn('storm hold not written into etcd; this store still holds its own removals', { clusterId: cluster.clusterId, error: String(error) });
  }
}

/**
 * The pause that holds a step about to change the cluster outside an incident (a hygiene move, a
 * learner's removal), asked through the healthy members of `view`; a pause we cannot read holds
 * too, said as one: `{ mark, fleetWide, unread }`.
 */
export async function pauseHolding(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  view: ClusterView | undefined,
): Promise<(NonNullable<ReturnType<typeof pauseOf>> & { unread?: true }) | undefined> {
  const seen = await pauseSeen(deps, cluster, clusterGuard(deps, cluster, view, undefined));
  if (seen.ok) return seen.value;
  const why = `the pauses kept in etcd could not be read (${seen.where}: ${seen.failure.message}), and a pause we cannot read may be there`;
  return { mark: { by: 'no one we could read', at: deps.clock.now(), why }, fleetWide: false, unread: true };
}

/**
 * The fleet storm that holds a change to this cluster other than a removal (a defragmentation, a
 * leadership move), said with `what` waits; undefined when none. The store's facts and the holds
 * in the cluster's etcd, as the removal's gate reads them; holds that cannot be read leave the
 * store's facts to answer.
 */
export async function stormHoldingChange(deps: ClusterDeps, cluster: ClusterEntry, view: ClusterView | undefined, what: string): Promise<string | undefined> {
  const facts = await fleetFactsWithHolds(deps, cluster, clusterGuard(deps, cluster, view, undefined));
  const storm = stormHolding(facts.ok ? facts.value : facts.storeFacts, cluster.policy.fleet, deps.clock.now());
  return storm && stormHoldsMessage(storm, cluster.policy.fleet, what);
}

/** The pauses that make `pauseOf` say `pause` again, for a gate that takes FleetPauses. */
export const pausesOf = (pause: NonNullable<ReturnType<typeof pauseOf>>, clusterId: string): FleetPauses =>
  pause.fleetWide ? { fleet: pause.mark } : { clusters: { [clusterId]: pause.mark } };

/** A mark as a person writes it into etcd: who, when, why, and from where. */
export const markFrom = (mark: FleetMark, where: string): FleetMark => ({ ...mark, where });

export const gateContextOf = (deps: Pick<Deps, 'clock'>, cluster: ClusterEntry, incident: Incident): GateContext => ({
  clusterId: incident.clusterId,
  openedAt: incident.openedAt,
  now: deps.clock.now(),
  policy: cluster.policy,
  lastDecision: incident.lastDecision,
});
