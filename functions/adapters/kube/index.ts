// The Kubernetes side as the other adapters use it: etcd reached through a workload cluster, and
// the Cluster API clusters a management cluster lists. Everything else stays inside this folder.
export { createKubeEtcd, type KubeEtcdOptions } from './kube-etcd.ts';
export { listClusterIds } from './cluster-api/cluster-list.ts';
export { workloadKubeconfigFromSecret } from './cluster-api/cluster-access.ts';
