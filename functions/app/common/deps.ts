// Everything a handler needs from the outside world, chosen once at the edge.
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
  etcdFor: (cluster: ClusterEntry) => ClusterEtcd;
  actuator: Actuator;
  clock: Clock;
  random: () => number;
  log: Log;
  /** Needed only by clusters whose policy asks for a snapshot before each removal. */
  snapshots?: SnapshotStore;
}
