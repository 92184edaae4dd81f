// The storm guard's rule, pure. A cluster counts when an incident of it opened within the storm
// window; the storm is on while the count exceeds the threshold, and stays on until the count has
// been at or under it for the cooldown (medik8s NodeHealthCheck's storm recovery: remediation
// stops while too many nodes are unhealthy and resumes only a cooldown after the count recovered).
// It is read from open times, not from open incidents: the incidents a storm defers stay open, and
// counting them would hold the storm on for ever.
import type { Policy } from '../policy/index.ts';

export type FleetPolicy = Policy['fleet'];

/** A cluster's newest incident opening (stuck-learner cleanups not counted). */
export interface ClusterOpened {
  clusterId: string;
  openedAt: number;
}

export interface StormFacts {
  /** Each cluster's newest opening; older ones may be left out, newer than `now` are ignored. */
  opened: readonly ClusterOpened[];
  registeredClusters: number;
  /** A person ended the storm then (resume --storm): openings before it no longer count. */
  endedByHandAt?: number;
  now: number;
}

export interface Storm {
  /** Clusters counted now, within the window. */
  count: number;
  threshold: number;
  registered: number;
  /** Every cluster of the storm, newest opening first. */
  clusters: string[];
  /** When the count first exceeded the threshold in this storm. */
  since: number;
  /** When the count fell back to the threshold, or will if no other cluster fails. */
  underFrom: number;
  /** When the guard lifts if no other cluster fails: a cooldown after `underFrom`. */
  liftsAt: number;
}

/** Exceeding the share and at least stormMinClusters: a count above this is a storm. */
export const stormThreshold = (policy: FleetPolicy, registered: number): number =>
  Math.max(policy.stormMinClusters - 1, Math.floor(policy.stormShare * Math.max(0, registered)));

/**
 * The storm now, or undefined. The count at time t is the clusters that opened in (t − window, t];
 * it exceeds the threshold T exactly while some T+1 openings fit in one window, from the newest of
 * them until the oldest leaves the window. The storm is on now when such a run ended less than a
 * cooldown ago; runs that overlap, cooldown included, are one storm.
 */
export function stormOf(facts: StormFacts, policy: FleetPolicy): Storm | undefined {
  const threshold = stormThreshold(policy, facts.registeredClusters);
  const after = facts.endedByHandAt ?? Number.NEGATIVE_INFINITY;
  const opens = facts.opened.filter((o) => o.openedAt > after && o.openedAt <= facts.now).sort((a, b) => b.openedAt - a.openedAt);
  const window = policy.stormWindowMs;
  // Runs of threshold+1 openings within one window, newest first: [start, end) is when each holds the count over.
  const runs: { start: number; end: number; newest: number; oldest: number }[] = [];
  for (let i = 0; i + threshold < opens.length; i++) {
    const newest = opens[i]!.openedAt;
    const oldest = opens[i + threshold]!.openedAt;
    if (newest - oldest < window) runs.push({ start: newest, end: oldest + window, newest: i, oldest: i + threshold });
  }
  const latest = runs[0];
  if (!latest || facts.now >= latest.end + policy.stormCooldownMs) return undefined;
  // Walk back through the runs that touch this storm (each ending, with its cooldown, after the next began).
  let first = latest;
  let oldestIndex = latest.oldest;
  for (const run of runs.slice(1)) {
    if (run.end + policy.stormCooldownMs < first.start) break;
    first = run;
    oldestIndex = Math.max(oldestIndex, run.oldest);
  }
  const count = opens.filter((o) => facts.now - o.openedAt < window).length;
  return {
    count,
    threshold,
    registered: facts.registeredClusters,
    clusters: opens.slice(0, oldestIndex + 1).map((o) => o.clusterId),
    since: first.start,
    underFrom: latest.end,
    liftsAt: latest.end + policy.stormCooldownMs,
  };
}
