// Kubernetes access for one cluster, as plain data the directory can hold: the edge turns it into
// clients once. Without it a cluster has the direct path only and its machines are left alone.

import type { MachineApiVersion } from '../core/kubernetes/index.ts';

/** The Cluster API versions this product reads: core's list (machine-api.ts). */
export type { MachineApiVersion };

export interface KubeAccessConfig {
  /** The workload cluster's kubeconfig (YAML text): its etcd pods, Nodes, exec and port-forward. */
  workloadKubeconfig: string;
  /** Where kubeadm's etcd static pods run (default kube-system). */
  etcdNamespace?: string;
  /** Cluster API: where the cluster's Machines are, to read them and to replace the removed one. */
  management?: {
    /** The management cluster's kubeconfig (YAML text), or the pod's own service account. */
    kubeconfig: string | { inCluster: true };
    namespace: string;
    clusterName: string;
    machineApiVersion?: MachineApiVersion;
  };
  /** Certificates inside the etcd pods for the exec relay; kubeadm's when unset. */
  relayTls?: { cacert: string; cert: string; key: string };
  /** etcdctl inside the etcd pods, by absolute path, for the exec relay; kubeadm's image's (/usr/local/bin/etcdctl) when unset. */
  relayBinary?: string;
}
