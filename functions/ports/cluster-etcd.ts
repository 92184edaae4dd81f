// etcd access for one cluster, as the edge builds it: clients, a prober and the guard of the
// cluster lock and removal record, sharing that cluster's credentials.
import type { ClusterGuard } from './cluster-guard.ts';
import type { EndpointTarget, EtcdTransport, Prober } from './etcd.ts';
import type { MemberMetrics } from './member-metrics.ts';

/** etcd access for one cluster: clients and a prober sharing that cluster's credentials. */
export interface ClusterEtcd {
  transport: EtcdTransport;
  prober: Prober;
  /**
   * The lock and removal record in the cluster's own etcd, asked through these endpoints in turn.
   * An access without one removes nothing (NO_SHARED_LOCK), unless the cluster's policy names it
   * single-remediator: then both live in the state store.
   */
  /**
   * How leader hygiene reads each member's /metrics and Status on this access (through Kubernetes:
   * a port-forward to the pod's metrics port). Absent: GET on the member's client URL, or its
   * `metricsUrls` entry, with Status through `transport` (adapters/etcd/member-metrics.ts).
   */
  metrics?: MemberMetrics;
  guard?: (targets: EndpointTarget[], options?: { deadlineMs?: number }) => ClusterGuard;
}
