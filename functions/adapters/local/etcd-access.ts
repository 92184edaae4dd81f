// One etcd access per cluster for the local runtime: the direct path, or for a cluster with kube
// access the port-forward and exec relay paths beside it, the Kubernetes client loaded with it.
import { createPerClusterEtcd } from '../etcd/index.ts';
import { createKubeEtcd } from '../kube/index.ts';
import type { ClusterEtcd } from '../../ports/cluster-etcd.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';

/** `clock` is the runtime's: probes are stamped on the clock every timing decision reads. */
export function createEtcdAccess(clock?: Clock): { etcdFor: (cluster: ClusterEntry) => ClusterEtcd; close(): Promise<void> } {
  return createPerClusterEtcd(createKubeEtcd, clock);
}
