// The holds kept in a cluster's own etcd, beside the lock and the removal record, so that every
// remediator of that cluster honours them whatever its state file: a pause of the cluster, a
// fleet-wide pause as written into it, and a storm hold a fleet's remediator wrote while the fleet
// it sees is in a storm. Pure: their shape, how a stored value reads, and how they join the facts
// the fleet gates judge (fleet-gate.ts).
import { z } from 'zod';
import type { FleetFacts, FleetMark } from './fleet-gate.ts';
import type { Storm } from './fleet-storm.ts';

/** The holds' keys under the guard prefix: `${prefix}/holds/<kind>`. */
export const HOLD_KINDS = ['pause', 'fleet-pause', 'storm'] as const;
export type HoldKind = (typeof HOLD_KINDS)[number];

/** A storm as the remediator that saw it wrote it into a cluster: the figures, and when it lifts. */
export interface StormHold extends Storm, FleetMark {}

export interface ClusterHolds {
  pause?: FleetMark;
  fleetPause?: FleetMark;
  storm?: StormHold;
}

/** The field of ClusterHolds a kind is read into. */
export const holdField = (kind: HoldKind): keyof ClusterHolds => (kind === 'fleet-pause' ? 'fleetPause' : kind);

export type HoldValue<K extends HoldKind> = K extends 'storm' ? StormHold : FleetMark;

// Strict: the key is the reader's to add, never read from the value.
const mark = z.strictObject({ by: z.string().max(500), at: z.number().int().nonnegative(), why: z.string().max(2000), where: z.string().max(1000).optional() });
const storm = mark.extend({
  count: z.number().int().nonnegative(),
  threshold: z.number().int().nonnegative(),
  registered: z.number().int().nonnegative(),
  clusters: z.array(z.string().max(253)).max(100),
  since: z.number(),
  underFrom: z.number(),
  liftsAt: z.number(),
});

/**
 * A stored hold as it reads. A value that is not one of ours still holds: someone wrote a key where
 * only holds live, and reading it as "no hold" would walk past a pause we cannot read.
 */
export function holdOf(kind: HoldKind, key: string, raw: string): FleetMark | StormHold {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  const read = (kind === 'storm' ? storm : mark).safeParse(parsed);
  if (read.success) return { ...read.data, key };
  const unreadable: FleetMark = {
    by: 'unknown',
    at: 0,
    why: `the hold at etcd key ${key} cannot be read (${raw.length} bytes, not a hold this version writes)`,
    key,
  };
  return kind === 'storm'
    ? { ...unreadable, count: 0, threshold: 0, registered: 0, clusters: [], since: 0, underFrom: Number.MAX_SAFE_INTEGER, liftsAt: Number.MAX_SAFE_INTEGER }
    : unreadable;
}

/** The hold of `kind` a stored key names, or undefined for a key that is none of ours. */
export const holdKindOf = (prefix: string, key: string): HoldKind | undefined => HOLD_KINDS.find((kind) => key === `${prefix}/holds/${kind}`);

/** A storm hold that still holds at `now`: not lifted, and not ended by hand since it was written. */
export function liveStormHold(facts: Pick<FleetFacts, 'pauses' | 'stormHold'>, now: number): StormHold | undefined {
  const hold = facts.stormHold;
  if (!hold || now >= hold.liftsAt) return undefined;
  const ended = facts.pauses.stormEnded;
  return ended && ended.at >= hold.at ? undefined : hold;
}

/**
 * The store's facts joined with the cluster's etcd holds: a pause in either holds, the store's own
 * words first (it is the one a person of this remediator wrote); a storm hold joins as it is.
 */
export function withClusterHolds(facts: FleetFacts, clusterId: string, holds: ClusterHolds): FleetFacts {
  const own = facts.pauses.clusters && Object.hasOwn(facts.pauses.clusters, clusterId) ? facts.pauses.clusters[clusterId] : undefined;
  const clusterPause = own ?? holds.pause;
  const fleet = facts.pauses.fleet ?? holds.fleetPause;
  return {
    ...facts,
    pauses: {
      ...facts.pauses,
      ...(fleet ? { fleet } : {}),
      ...(clusterPause ? { clusters: { ...facts.pauses.clusters, [clusterId]: clusterPause } } : {}),
    },
    ...(holds.storm ? { stormHold: holds.storm } : {}),
  };
}

/** The hold a store's storm writes into one of its clusters. */
export const stormHoldOf = (storm: Storm, where: string, now: number): StormHold => ({
  ...storm,
  clusters: storm.clusters.slice(0, 100),
  by: 'the storm guard',
  at: now,
  why: `${storm.count} of ${storm.registered} registered clusters opened incidents within the storm window`,
  where,
});

/** Whether the hold written in etcd already says this storm: rewritten only when it would say more. */
export const sameStorm = (written: StormHold | undefined, storm: Storm): boolean =>
  !!written && written.since === storm.since && written.liftsAt === storm.liftsAt && written.count === storm.count;
