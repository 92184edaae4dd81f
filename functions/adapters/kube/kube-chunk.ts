// What loads only when a cluster has Kubernetes access (a Lambda, the local runtime): the port-forward
// and exec relay etcd paths and the Cluster API Machine actuator, and with them the Kubernetes
// client. Imported dynamically (kube-on-demand.ts), so the bundler puts it in a chunk of its own.
export { createKubeEtcd } from './kube-etcd.ts';
export { createClusterActuator } from './cluster-api/cluster-actuator.ts';
