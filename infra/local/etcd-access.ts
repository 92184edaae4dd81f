// One etcd transport and prober per cluster, created on first use and closed with the runtime.
import { createEtcd3Transport, createProber, directPaths } from '../../functions/adapters/etcd/index.ts';
import { createEtcdGuards } from '../../functions/adapters/etcd/etcd-guard.ts';
import type { ClusterEtcd } from '../../functions/app/deps.ts';
import type { Clock } from '../../functions/ports/clock.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';

/** `clock` is the runtime's: probes are stamped on the clock every timing decision reads. */
export function createEtcdAccess(clock?: Clock): { etcdFor: (cluster: ClusterEntry) => ClusterEtcd; close(): Promise<void> } {
  const byCluster = new Map<string, ClusterEtcd>();
  const closers: (() => void)[] = [];
  return {
    etcdFor(cluster) {
      let access = byCluster.get(cluster.clusterId);
      if (!access) {
        const tls = cluster.tls ? { tls: cluster.tls } : {};
        const transport = createEtcd3Transport(tls);
        const guards = createEtcdGuards({ ...tls, prefix: cluster.policy.guardPrefix, deadlineMs: cluster.policy.callTimeoutMs });
        access = { transport, prober: createProber(transport, directPaths, clock), guard: guards.at };
        byCluster.set(cluster.clusterId, access);
        closers.push(guards.close);
      }
      return access;
    },
    async close() {
      await Promise.all([...byCluster.values()].map((a) => a.transport.close()));
      for (const close of closers.splice(0)) close();
      byCluster.clear();
    },
  };
}
