// One etcd access per cluster, created on first use and closed with the runtime: the direct path
// only, or, for a cluster with kube access, what `kubeEtcd` builds (the port-forward and exec
// relay paths beside it). The kube side is handed in, not imported, so an edge that loads the
// Kubernetes client only when a cluster needs it (the Lambda bundles) can use this as it is.
import { createEtcd3Transport } from './transport.ts';
import { createProber } from './prober.ts';
import { credentialsOf } from './member-client.ts';
import { directPaths } from './path-resolvers.ts';
import { createEtcdGuards } from './etcd-guard.ts';
import { memberMetricsOf } from './member-metrics.ts';
import type { ClusterEtcd } from '../../ports/cluster-etcd.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { KubeAccessConfig } from '../../ports/kube-access.ts';
// Types only: erased from the build, so this file loads no Kubernetes client.
import type { KubeEtcdOptions } from '../kube/index.ts';

export type ClosableEtcd = ClusterEtcd & { close(): Promise<void> };

/** createKubeEtcd's shape (adapters/kube/kube-etcd.ts). */
export type KubeEtcdFactory = (access: KubeAccessConfig, options: KubeEtcdOptions) => ClosableEtcd;

function directEtcd(cluster: ClusterEntry, clock: Clock | undefined): ClosableEtcd {
  // TLS and the etcd user for every client: the probe's, the removal's, the snapshot's, the guard's.
  const credentials = credentialsOf(cluster);
  const transport = createEtcd3Transport(credentials);
  const guards = createEtcdGuards({ ...credentials, prefix: cluster.policy.guardPrefix, deadlineMs: cluster.policy.callTimeoutMs });
  return {
    transport,
    prober: createProber(transport, directPaths, clock),
    // Leader hygiene's scrape: the client URL's /metrics (or the cluster's metricsUrls) and Status over this transport.
    metrics: memberMetricsOf(cluster, transport, clock),
    guard: guards.at,
    async close() {
      guards.close();
      await transport.close();
    },
  };
}

/** `clock` is the runtime's: probes are stamped on the clock every timing decision reads. */
export function createPerClusterEtcd(kubeEtcd: KubeEtcdFactory, clock?: Clock): { etcdFor: (cluster: ClusterEntry) => ClusterEtcd; close(): Promise<void> } {
  const byCluster = new Map<string, ClosableEtcd>();
  return {
    etcdFor(cluster) {
      let access = byCluster.get(cluster.clusterId);
      if (!access) {
        access = cluster.kube
          ? kubeEtcd(cluster.kube, {
              ...credentialsOf(cluster),
              guardPrefix: cluster.policy.guardPrefix,
              callTimeoutMs: cluster.policy.callTimeoutMs,
              ...(clock ? { clock } : {}),
            })
          : directEtcd(cluster, clock);
        byCluster.set(cluster.clusterId, access);
      }
      return access;
    },
    async close() {
      const all = [...byCluster.values()];
      byCluster.clear();
      await Promise.all(all.map((access) => access.close()));
    },
  };
}
