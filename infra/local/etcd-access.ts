// One etcd transport and prober per cluster, created on first use and closed with the runtime.
import { createEtcd3Transport, createProber, directPaths } from '../../functions/adapters/etcd/index.ts';
import type { ClusterEtcd } from '../../functions/app/deps.ts';
import type { Clock } from '../../functions/ports/clock.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';

/** `clock` is the runtime's: probes are stamped on the clock every timing decision reads. */
export function createEtcdAccess(clock?: Clock): { etcdFor: (cluster: ClusterEntry) => ClusterEtcd; close(): Promise<void> } {
  const byCluster = new Map<string, ClusterEtcd>();
  return {
    etcdFor(cluster) {
      let access = byCluster.get(cluster.clusterId);
      if (!access) {
        const transport = createEtcd3Transport(cluster.tls ? { tls: cluster.tls } : {});
        access = { transport, prober: createProber(transport, directPaths, clock) };
        byCluster.set(cluster.clusterId, access);
      }
      return access;
    },
    async close() {
      await Promise.all([...byCluster.values()].map((a) => a.transport.close()));
      byCluster.clear();
    },
  };
}
