// The fleet's gates on a decision, pure: a pause holds every step that changes a cluster (a leader
// move, a removal, the actuator), a storm defers new removals only (a leader move costs no vote
// and keeps the cluster whole), and both are waits that spend no attempt, bounded by the incident
// deadline. The app loads the facts (pauses, the fleet's recent openings, the registered count).
import { type Decision, type Evidence, decidedBy } from '../common/index.ts';
import { stormOf, type ClusterOpened, type FleetPolicy, type Storm } from './fleet-storm.ts';
import { pausedMessage, removalsInFlightMessage, stormMessage } from './fleet-words.ts';
import type { Policy } from '../policy/index.ts';
import { rowSaidIn } from '../waits/index.ts';
import { liveStormHold, type StormHold } from './cluster-holds.ts';

/** Who paused, when and why; also who ended a storm by hand. */
export interface FleetMark {
  by: string;
  at: number;
  why: string;
  /** The store a person or a remediator wrote it from, when it was written into etcd: "state file F on host H", "table T". */
  where?: string;
  /** The etcd key it was read from, for a hold kept in the cluster's etcd. */
  key?: string;
}

export interface FleetPauses {
  fleet?: FleetMark;
  /** Pauses of single clusters, by cluster id. */
  clusters?: Readonly<Record<string, FleetMark>>;
  /** The last time a person ended a storm (resume --storm). */
  stormEnded?: FleetMark;
}

/** What the app loads for the gates. */
export interface FleetFacts {
  pauses: FleetPauses;
  opened: readonly ClusterOpened[];
  registeredClusters: number;
  /** A storm hold a fleet's remediator wrote into this cluster's etcd (cluster-holds.ts). */
  stormHold?: StormHold;
}

export interface GateContext {
  clusterId: string;
  openedAt: number;
  now: number;
  policy: Pick<Policy, 'backoff' | 'incidentDeadlineMs' | 'fleet'>;
  /** The incident's decision before this one: a fleet wait in a row waits longer. */
  lastDecision?: Decision | undefined;
}

/** The evidence field in which a fleet wait says its place in the row. */
export const FLEET_WAITS_IN_A_ROW = 'fleetWaitsInARow';

const fleetWaits = new Set<string>(['PAUSED', 'FLEET_STORM', 'REMOVALS_IN_FLIGHT']);

/** Fleet waits in a row up to the incident's last decision. */
export const fleetWaitsBefore = (last: Decision | undefined): number =>
  last?.kind === 'retry' && fleetWaits.has(last.reason) ? Math.max(1, rowSaidIn(last.evidence, FLEET_WAITS_IN_A_ROW)) : 0;

/**
 * When a fleet wait looks again: after the backoff base, twice as long each look in a row, up to
 * the backoff cap, never past `until` (the storm's lift) nor the incident deadline, so a resume is
 * seen within one wait and a long pause costs a dozen looks, not one every few seconds.
 */
export function fleetWaitUntil(ctx: GateContext, until = Number.POSITIVE_INFINITY): number {
  const before = Math.min(30, fleetWaitsBefore(ctx.lastDecision));
  const wait = Math.min(ctx.policy.backoff.capMs, Math.max(1, ctx.policy.backoff.baseMs) * 2 ** before);
  return Math.max(ctx.now + 1, Math.min(ctx.now + wait, until, ctx.openedAt + ctx.policy.incidentDeadlineMs));
}

/** The pause that holds this cluster: its own, else the fleet's. */
export function pauseOf(pauses: FleetPauses, clusterId: string): { mark: FleetMark; fleetWide: boolean } | undefined {
  const own = pauses.clusters && Object.hasOwn(pauses.clusters, clusterId) ? pauses.clusters[clusterId] : undefined;
  if (own) return { mark: own, fleetWide: false };
  return pauses.fleet ? { mark: pauses.fleet, fleetWide: true } : undefined;
}

/** The storm the store's facts show now, or undefined. */
export const stormNow = (facts: FleetFacts, policy: FleetPolicy, now: number): Storm | undefined =>
  stormOf(
    {
      opened: facts.opened,
      registeredClusters: facts.registeredClusters,
      now,
      ...(facts.pauses.stormEnded ? { endedByHandAt: facts.pauses.stormEnded.at } : {}),
    },
    policy,
  );

/** The storm that holds this cluster: the one its own store sees, else one a fleet's remediator wrote into its etcd. */
export const stormHolding = (facts: FleetFacts, policy: FleetPolicy, now: number): (Storm & { where?: string; key?: string }) | undefined =>
  stormNow(facts, policy, now) ?? liveStormHold(facts, now);

const fleetWait = (
  held: Pick<Decision, 'kind' | 'reason' | 'message' | 'evidence'>,
  reason: 'PAUSED' | 'FLEET_STORM',
  at: number,
  message: string,
  evidence: Evidence,
  ctx: GateContext,
): Decision =>
  decidedBy(
    {
      kind: 'retry',
      at,
      reprobeNow: false,
      reason,
      message,
      evidence: {
        ...held.evidence,
        ...evidence,
        held: { kind: held.kind, reason: held.reason },
        [FLEET_WAITS_IN_A_ROW]: fleetWaitsBefore(ctx.lastDecision) + 1,
      },
    },
    reason === 'PAUSED' ? 'fleet-pause' : 'fleet-storm',
  );

/** A decision that would change the cluster, held while paused: PAUSED, saying who, when, why and what is held. */
export function checkPause(decision: Decision, pauses: FleetPauses, ctx: GateContext): Decision {
  if (decision.kind !== 'approve' && decision.kind !== 'move-leader') return decision;
  return pausedStep(pauses, ctx, decision) ?? decision;
}

/** PAUSED for a step about to change the cluster (`held` says what it would do), or undefined when nothing pauses it. */
export function pausedStep(pauses: FleetPauses, ctx: GateContext, held: Pick<Decision, 'kind' | 'reason' | 'message' | 'evidence'>): Decision | undefined {
  const pause = pauseOf(pauses, ctx.clusterId);
  if (!pause) return undefined;
  const at = fleetWaitUntil(ctx);
  return fleetWait(held, 'PAUSED', at, pausedMessage(pause, ctx.clusterId, held.message, at), { pause: { ...pause.mark, fleetWide: pause.fleetWide } }, ctx);
}

/** REMOVALS_IN_FLIGHT: every slot of the cap is held; looked at again when the first lease ends, or sooner. */
export function removalsInFlight(holders: readonly { owner: string; clusterId: string; until: number }[], name: string, ctx: GateContext): Decision {
  const max = ctx.policy.fleet.maxRemovalsInFlight;
  const at = fleetWaitUntil(ctx, Math.min(...holders.map((h) => h.until)));
  return decidedBy(
    {
      kind: 'retry',
      at,
      reprobeNow: false,
      reason: 'REMOVALS_IN_FLIGHT',
      message: removalsInFlightMessage(holders, max, name, at),
      evidence: { holders: holders.slice(0, 20), maxRemovalsInFlight: max, [FLEET_WAITS_IN_A_ROW]: fleetWaitsBefore(ctx.lastDecision) + 1 },
    },
    'fleet-removal-cap',
  );
}

/** An approved removal, deferred while the fleet is in a storm: FLEET_STORM, with the figures. */
export function checkStorm(decision: Decision, facts: FleetFacts, ctx: GateContext): Decision {
  if (decision.kind !== 'approve') return decision;
  const storm = stormHolding(facts, ctx.policy.fleet, ctx.now);
  if (!storm) return decision;
  const at = fleetWaitUntil(ctx, storm.liftsAt);
  return fleetWait(
    decision,
    'FLEET_STORM',
    at,
    stormMessage(storm, ctx.policy.fleet, decision.message, at),
    { storm: { ...storm, clusters: storm.clusters.slice(0, 20) } },
    ctx,
  );
}

/** Both gates: a pause first (it holds more), then the storm. */
export const fleetGate = (decision: Decision, facts: FleetFacts, ctx: GateContext): Decision => {
  const paused = checkPause(decision, facts.pauses, ctx);
  return paused === decision ? checkStorm(decision, facts, ctx) : paused;
};
