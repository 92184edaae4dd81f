// Everything a handler needs from the outside world, chosen once at the edge: `Deps` for every
// step, `ClusterDeps` for those that talk to a cluster (its etcd, its machines, its snapshots).
// A function declares the narrowest it needs, so one that talks to no cluster is given none.
import type { Actuator } from '../../ports/actuator.ts';
import type { Bus } from '../../ports/bus.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ClusterDirectory, ClusterEntry } from '../../ports/cluster-directory.ts';
import type { ClusterEtcd } from '../../ports/cluster-etcd.ts';
import type { Log } from '../../ports/log.ts';
import type { IncidentStore } from '../../ports/incident-store.ts';
import type { Scheduler } from '../../ports/scheduler.ts';
import type { SnapshotStore } from '../../ports/snapshots.ts';

export interface Deps {
  store: IncidentStore;
  bus: Bus;
  scheduler: Scheduler;
  directory: ClusterDirectory;
  clock: Clock;
  random: () => number;
  log: Log;
}

export interface ClusterDeps extends Deps {
  etcdFor: (cluster: ClusterEntry) => ClusterEtcd;
  actuator: Actuator;
  /** Needed only by clusters whose policy asks for a snapshot before each removal. */
  snapshots?: SnapshotStore;
}
