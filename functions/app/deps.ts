// Everything a handler needs from the outside world, chosen once at the edge.
import type { Actuator } from '../ports/actuator.ts';
import type { Bus } from '../ports/bus.ts';
import type { Clock } from '../ports/clock.ts';
import type { ClusterGuard } from '../ports/cluster-guard.ts';
import type { ClusterDirectory, ClusterEntry } from '../ports/cluster-directory.ts';
import type { EndpointTarget, EtcdTransport, Prober } from '../ports/etcd.ts';
import type { IncidentStore } from '../ports/incident-store.ts';
import type { Scheduler } from '../ports/scheduler.ts';
import type { SnapshotStore } from '../ports/snapshots.ts';

/** etcd access for one cluster: clients and a prober sharing that cluster's credentials. */
export interface ClusterEtcd {
  transport: EtcdTransport;
  prober: Prober;
  /**
   * The lock and removal record in the cluster's own etcd, asked through these endpoints in turn.
   * An access without one removes nothing (NO_SHARED_LOCK), unless the cluster's policy names it
   * single-remediator: then both live in the state store.
   */
  guard?: (targets: EndpointTarget[], options?: { deadlineMs?: number }) => ClusterGuard;
}

/** The subset of Powertools Logger the application uses, so tests can pass a silent one. */
export interface Log {
  debug(message: string, ...extra: Record<string, unknown>[]): void;
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}

export interface Deps {
  store: IncidentStore;
  bus: Bus;
  scheduler: Scheduler;
  directory: ClusterDirectory;
  etcdFor: (cluster: ClusterEntry) => ClusterEtcd;
  actuator: Actuator;
  clock: Clock;
  random: () => number;
  log: Log;
  /** Needed only by clusters whose policy asks for a snapshot before each removal. */
  snapshots?: SnapshotStore;
}
