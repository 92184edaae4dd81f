// One etcd transport and prober per cluster, created on first use and closed with the runtime.
import { createEtcd3Transport, createProber, directPaths } from '../../functions/adapters/etcd/index.ts';
import type { ClusterEtcd } from '../../functions/app/deps.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';

export function createEtcdAccess(): { etcdFor(cluster: ClusterEntry): ClusterEtcd; close(): Promise<void> } {
  const byCluster = new Map<string, ClusterEtcd>();
  return {
    etcdFor(cluster) {
      let access = byCluster.get(cluster.clusterId);
      if (!access) {
        const transport = createEtcd3Transport(cluster.tls ? { tls: cluster.tls } : {});
        access = { transport, prober: createProber(transport, directPaths) };
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
