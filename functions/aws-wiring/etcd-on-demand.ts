// The etcd side of a pipeline function, loaded on first need: once the directory has returned a
// cluster's entry, before the caller can ask for that cluster's etcd. An invocation that ends
// earlier (a stale or duplicate event, a closed incident, an entry the directory refuses) never
// loads the etcd client. Loaded after the read, not beside it, so a refused entry costs nothing.
import type { Clock } from '../ports/clock.ts';
import type { ClusterDirectory, ClusterEntry, MemberLookup } from '../ports/cluster-directory.ts';
import type { ClusterEtcd } from '../ports/cluster-etcd.ts';
import type { KubeEtcdFactory } from '../adapters/etcd/per-cluster-access.ts';
// Types only: erased from the build, so the chunk stays out of index.mjs.
import type * as EtcdChunkModule from './etcd-chunk.ts';
import { lazyImport } from '../lib/lazy-import.ts';

type Directory = ClusterDirectory & MemberLookup;
type PerClusterEtcd = ReturnType<typeof EtcdChunkModule.createPerClusterEtcd>;

export interface EtcdOnDemand {
  /** The directory, loading the etcd chunk before it returns an entry. */
  directory: Directory;
  /** Only ever asked for a cluster the directory above returned. */
  etcdFor: (cluster: ClusterEntry) => ClusterEtcd;
}

export function etcdOnDemand(inner: Directory, kubeEtcd: KubeEtcdFactory, clock: Clock): EtcdOnDemand {
  const etcd = lazyImport<PerClusterEtcd>(async () => (await import('./etcd-chunk.ts')).createPerClusterEtcd(kubeEtcd, clock));
  const load = etcd.load;
  return {
    directory: {
      findByInstance: (instanceId) => inner.findByInstance(instanceId),
      findByNode: (nodeName) => inner.findByNode(nodeName),
      // Passed through: the scheduled rounds and the storm guard list the registered clusters.
      registeredClusterIds: async () => inner.registeredClusterIds?.(),
      async get(clusterId) {
        const entry = await inner.get(clusterId);
        await load();
        return entry;
      },
    },
    etcdFor: (cluster) => {
      const access = etcd.loaded();
      if (!access) throw new Error(`the etcd client is loaded when the directory returns a cluster's entry; ${cluster.clusterId}'s did not come from it`);
      return access.etcdFor(cluster);
    },
  };
}
