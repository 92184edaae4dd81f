// One etcd access per cluster for the local runtime and the command line: the direct path, or for
// a cluster with kube access the port-forward and exec relay paths beside it, built by `kubeEtcd`:
// the Kubernetes adapter loaded on demand (kube-on-demand.ts), so a command that meets no such
// cluster starts without the Kubernetes client.
import { createPerClusterEtcd, type KubeEtcdFactory } from '../etcd/index.ts';
import type { ClusterEtcd } from '../../ports/cluster-etcd.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';

/** `clock` is the runtime's: probes are stamped on the clock every timing decision reads. */
export function createEtcdAccess(kubeEtcd: KubeEtcdFactory, clock?: Clock): { etcdFor: (cluster: ClusterEntry) => ClusterEtcd; close(): Promise<void> } {
  return createPerClusterEtcd(kubeEtcd, clock);
}
