// etcd access for one cluster, as the edge builds it: clients, a prober and the guard of the
// cluster lock and removal record, sharing that cluster's credentials.
import type { ClusterGuard } from './cluster-guard.ts';
import type { EndpointTarget, EtcdTransport, Prober } from './etcd.ts';

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
