// What every remediator of one cluster must see, whatever its state file: the cluster lock, the
// record of the last removal, and the holds (a pause, a fleet pause, a storm hold). The one place they all reach is etcd itself, so both live
// there, under a configurable key prefix.
import type { ClusterHolds, HoldKind, HoldValue } from '../core/fleet/index.ts';
import type { RemovalRecord } from '../core/replacement/index.ts';

export type { ClusterHolds, HoldKind, HoldValue, RemovalRecord };

/** Who holds a lock someone else asked for. */
export interface LockHolder {
  owner: string;
  /** Epoch ms, when the holder took it. */
  since: number;
}

export interface ClusterGuard {
  /** Where the lock and record live, for the sentence, e.g. "etcd key /etcd-remediator/lock". */
  readonly where: string;
  /**
   * Takes the lock with a lease of `leaseMs`; the holder when someone else has it. A holder whose
   * owner starts with `takeOverFrom` is replaced: an earlier run of the same incident, which a
   * crash left holding it (the incident's own step lease keeps two runs from overlapping). Throws
   * EtcdCallError when etcd refuses the write (auth, no quorum): the caller decides what then.
   */
  acquire(owner: string, leaseMs: number, options?: { takeOverFrom?: string }): Promise<{ held: true } | { held: false; holder?: LockHolder }>;
  /**
   * Who holds the lock now, read only: under a NOSPACE alarm etcd refuses the lease the lock is
   * made of, and still answers this. Undefined when no one holds it.
   */
  holder(): Promise<LockHolder | undefined>;
  /** Renews our lease; false when the lock is no longer ours (it lapsed and was taken). */
  renew(owner: string, leaseMs: number): Promise<boolean>;
  /** Deletes the lock if it is still ours. */
  release(owner: string): Promise<void>;
  /** The recent removals, oldest first (see core/replacement/replacement.ts). */
  removals(): Promise<RemovalRecord[]>;
  /** Writes the whole list; only the lock holder writes it, so no other writer races it. */
  saveRemovals(records: RemovalRecord[]): Promise<void>;
  /** The pauses and the storm hold kept beside the lock (core/fleet/cluster-holds.ts). */
  holds(): Promise<ClusterHolds>;
  /** Writes one hold, or lifts it with null; true when that changed what is kept. */
  setHold<K extends HoldKind>(kind: K, value: HoldValue<K> | null): Promise<boolean>;
}
