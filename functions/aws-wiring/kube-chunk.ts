// What a Lambda loads only when a cluster is registered with Kubernetes access: the port-forward
// and exec relay etcd paths and the Cluster API Machine actuator, and with them the Kubernetes
// client. Imported dynamically (kube-on-demand.ts), so the bundler puts it in a chunk of its own.
export { createKubeEtcd } from '../adapters/kube/kube-etcd.ts';
export { createClusterActuator } from '../adapters/kube/cluster-api/cluster-actuator.ts';
