// The fleet's records in the incident store: pauses, each cluster's newest incident opening (for
// the storm guard, one record per cluster, so reading the fleet's activity never scans incidents),
// and the slots of the removals in flight. Every write is one conditional write or transaction.
import type { FleetMark, FleetPauses, ClusterOpened } from '../core/fleet/index.ts';

export type { FleetMark, FleetPauses } from '../core/fleet/index.ts';
export type { ClusterOpened } from '../core/fleet/index.ts';

/** A removal in flight: its slot, the incident that holds it and until when. */
export interface RemovalSlot {
  slot: number;
  owner: string;
  clusterId: string;
  until: number;
}

export type SlotTaken = { taken: true; slot: number } | { taken: false; holders: RemovalSlot[] };

export interface SlotRequest {
  /** The incident removing a member: taking again renews its own slot. */
  owner: string;
  clusterId: string;
  /** Slots 0 … max−1 are the ones this caller may take. */
  max: number;
  /** A holder that died frees its slot this long after it took or renewed it. */
  leaseMs: number;
  now: number;
}

export interface FleetRecords {
  /** Where these records live, as a sentence names them: "state file /var/lib/x.sqlite", "table T". */
  readonly where: string;
  /**
   * The fleet this store serves: every cluster a remediator of it was given. `replace` sets it to
   * exactly these (run's configuration); otherwise they join it. A store whose directory is itself
   * the roster (a deployed table's registered clusters) keeps nothing here.
   */
  noteFleet(clusterIds: readonly string[], options: { replace: boolean }): Promise<void>;
  /** The clusters of the roster. */
  fleetRoster(): Promise<string[]>;
  /** Every pause, and the last storm a person ended. */
  fleetPauses(): Promise<FleetPauses>;
  /** Pauses one cluster, or the fleet when clusterId is undefined; null lifts it. True when it changed anything. */
  setPause(clusterId: string | undefined, mark: FleetMark | null): Promise<boolean>;
  /** A person ends the storm now: openings before `mark.at` no longer count. */
  endStorm(mark: FleetMark): Promise<void>;
  /** Keeps the cluster's newest opening: an older `openedAt` changes nothing, so a repeat is harmless. */
  noteOpened(clusterId: string, openedAt: number): Promise<void>;
  /** Each cluster's newest opening after `since`. */
  openedSince(since: number): Promise<ClusterOpened[]>;
  /** Atomic: never more than `max` holders of slots 0 … max−1, however many callers race. */
  takeRemovalSlot(request: SlotRequest): Promise<SlotTaken>;
  /** Only the owner releases; true when it held a slot. */
  releaseRemovalSlot(owner: string): Promise<boolean>;
  /** Slots held and not expired at `now`. */
  removalSlots(now: number): Promise<RemovalSlot[]>;
}
