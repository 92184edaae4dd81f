// What a pipeline function loads only when an invocation reaches a cluster: the etcd access (etcd3,
// gRPC and etcd3's precompiled protos). Imported dynamically (etcd-on-demand.ts), so the bundler
// puts it in a chunk of its own, and an invocation that ends before any cluster never loads it.
export { createPerClusterEtcd } from '../adapters/etcd/per-cluster-access.ts';
