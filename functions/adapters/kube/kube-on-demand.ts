// The Kubernetes side, loaded on first need: the first time the directory hands out a cluster with
// kube access, before the caller can ask for that cluster's etcd or its actuator. A Lambda
// container, or a local command, that only sees etcd-only clusters never loads the Kubernetes
// client (about a second of start-up). The lazy face of this adapter: it loads nothing of it.
import type { Actuator } from '../../ports/actuator.ts';
import type { ClusterDirectory, ClusterEntry, MemberLookup } from '../../ports/cluster-directory.ts';
import type { KubeEtcdFactory } from '../etcd/index.ts';
// Types only: erased from the build, so the chunk stays out of index.mjs.
import type * as KubeChunkModule from './kube-chunk.ts';
import { lazyImport, type Lazy } from '../../lib/lazy-import.ts';

type KubeChunk = typeof KubeChunkModule;

export interface KubeOnDemand<Directory extends ClusterDirectory = ClusterDirectory> {
  /** The directory, loading the kube chunk before it returns an entry with kube access. */
  directory: Directory;
  /** For per-cluster-access.ts: only ever asked for a cluster the directory above returned. */
  kubeEtcd: KubeEtcdFactory;
  /** The Machine actuator where an entry names Cluster API access, `fallback` for the rest. */
  actuator(fallback: Actuator): Actuator;
}

/** For entries a caller built itself (a command's flags): the Kubernetes client is loaded when one of them has kube access. */
export async function kubeEtcdFor(entries: readonly Pick<ClusterEntry, 'kube'>[]): Promise<KubeEtcdFactory> {
  const chunk = kubeChunk();
  if (entries.some((entry) => entry.kube)) await chunk.load();
  return (access, options) => loadedFrom(chunk).createKubeEtcd(access, options);
}

const kubeChunk = (): Lazy<KubeChunk> => lazyImport<KubeChunk>(() => import('./kube-chunk.ts'));

function loadedFrom(chunk: Lazy<KubeChunk>): KubeChunk {
  const it = chunk.loaded();
  if (!it) throw new Error('the Kubernetes client is loaded when the directory returns a cluster with kube access; this cluster did not come from it');
  return it;
}

export function kubeOnDemand(inner: ClusterDirectory & MemberLookup): KubeOnDemand<ClusterDirectory & MemberLookup>;
export function kubeOnDemand(inner: ClusterDirectory): KubeOnDemand;
export function kubeOnDemand(inner: ClusterDirectory & Partial<MemberLookup>): KubeOnDemand<ClusterDirectory & Partial<MemberLookup>> {
  const chunk = kubeChunk();
  const load = chunk.load;
  const loaded = (): KubeChunk => loadedFrom(chunk);
  const { findByInstance, findByNode } = inner;
  const directory: ClusterDirectory & Partial<MemberLookup> = {
    ...(findByInstance && findByNode
      ? { findByInstance: (instanceId: string) => findByInstance.call(inner, instanceId), findByNode: (nodeName: string) => findByNode.call(inner, nodeName) }
      : {}),
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
