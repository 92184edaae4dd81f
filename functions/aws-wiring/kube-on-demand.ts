// The Kubernetes side of a pipeline function, loaded on first need: the first time the directory
// hands out a cluster with kube access, before the caller can ask for that cluster's etcd or its
// actuator. A container that only sees etcd-only clusters never loads the Kubernetes client.
import type { Actuator } from '../ports/actuator.ts';
import type { ClusterDirectory, MemberLookup } from '../ports/cluster-directory.ts';
import type { KubeEtcdFactory } from '../adapters/etcd/per-cluster-access.ts';
// Types only: erased from the build, so the chunk stays out of index.mjs.
import type * as KubeChunkModule from './kube-chunk.ts';
import { lazyImport } from './lazy-import.ts';

type KubeChunk = typeof KubeChunkModule;

type Directory = ClusterDirectory & MemberLookup;

export interface KubeOnDemand {
  /** The directory, loading the kube chunk before it returns an entry with kube access. */
  directory: Directory;
  /** For per-cluster-access.ts: only ever asked for a cluster the directory above returned. */
  kubeEtcd: KubeEtcdFactory;
  /** The Machine actuator where an entry names Cluster API access, `fallback` for the rest. */
  actuator(fallback: Actuator): Actuator;
}

export function kubeOnDemand(inner: Directory): KubeOnDemand {
  const chunk = lazyImport<KubeChunk>(() => import('./kube-chunk.ts'));
  const load = chunk.load;
  const loaded = (): KubeChunk => {
    const it = chunk.loaded();
    if (!it) throw new Error('the Kubernetes client is loaded when the directory returns a cluster with kube access; this cluster did not come from it');
    return it;
  };
  const directory: Directory = {
    findByInstance: (instanceId) => inner.findByInstance(instanceId),
    findByNode: (nodeName) => inner.findByNode(nodeName),
    // Passed through: the scheduled rounds and the storm guard list the registered clusters.
    registeredClusterIds: async () => inner.registeredClusterIds?.(),
    async get(clusterId) {
      const entry = await inner.get(clusterId);
      if (entry.kube) await load();
      return entry;
    },
  };
  return {
    directory,
    kubeEtcd: (access, options) => loaded().createKubeEtcd(access, options),
    actuator(fallback) {
      let perCluster: Actuator | undefined;
      return {
        name: `per-cluster (capi-machine where configured, else ${fallback.name})`,
        async replace(request) {
          // An entry without kube access cannot name Machines: no need to load the chunk for it.
          if (!(await directory.get(request.clusterId)).kube) return fallback.replace(request);
          perCluster ??= loaded().createClusterActuator(directory, fallback);
          return perCluster.replace(request);
        },
      };
    },
  };
}
