// The cluster directory of the watcher: every Cluster API cluster a request names, found in the
// management cluster. Its id is `<namespace>/<cluster>`; its workload kubeconfig is the Secret
// `<cluster>-kubeconfig` there (or the one workloadKubeconfigSecret names), read once and kept;
// its policy is the watcher's.
import type { KubeConfig } from '@kubernetes/client-node';
import { listClusterIds, workloadKubeconfigFromSecret } from '../kube/index.ts';
import type { Policy } from '../../core/policy/index.ts';
import { UnknownClusterError, type ClusterDirectory, type ClusterEntry } from '../../ports/cluster-directory.ts';
import type { TlsFiles } from '../../ports/etcd.ts';
import type { KubeAccessConfig, MachineApiVersion } from '../../ports/kube-access.ts';

export interface CapiDirectoryOptions {
  management: KubeConfig;
  /** As the runtime's Machine actuator and Machine reader are to load it again. */
  managementSource: string | { inCluster: true };
  policy: Policy;
  /** The operator's files for every cluster (watch --cacert …); without them each cluster's are minted from its `<cluster>-etcd` Secret. */
  tls?: TlsFiles;
  machineApiVersion?: MachineApiVersion;
  /** The Secret of a cluster's workload kubeconfig, when not Cluster API's `<cluster>-kubeconfig` (same key). */
  workloadKubeconfigSecret?: (clusterName: string) => string;
  /** Where every cluster's etcd pods keep etcdctl and the relay's certificates, when not where kubeadm does. */
  relay?: Pick<KubeAccessConfig, 'relayBinary' | 'relayTls'>;
}

export const capiClusterId = (namespace: string, clusterName: string): string => `${namespace}/${clusterName}`;

const CLUSTER_LIST_CACHE_MS = 60_000;

export function createCapiDirectory(options: CapiDirectoryOptions): ClusterDirectory {
  const entries = new Map<string, Promise<ClusterEntry>>();
  async function load(clusterId: string): Promise<ClusterEntry> {
    const [namespace, clusterName, ...rest] = clusterId.split('/');
    if (!namespace || !clusterName || rest.length > 0) throw new UnknownClusterError(clusterId);
    const kube: KubeAccessConfig = {
      workloadKubeconfig: await workloadKubeconfigFromSecret(options.management, namespace, clusterName, options.workloadKubeconfigSecret?.(clusterName)),
      management: {
        kubeconfig: options.managementSource,
        namespace,
        clusterName,
        ...(options.machineApiVersion ? { machineApiVersion: options.machineApiVersion } : {}),
      },
      ...options.relay,
    };
    return { clusterId, endpoints: [], policy: options.policy, kube, ...(options.tls ? { tls: options.tls } : {}) };
  }
  let listed: { at: number; ids: Promise<readonly string[] | undefined> } | undefined;
  return {
    // The storm guard's share is of every Cluster the management cluster holds, listed at most once
    // a minute; a list refused leaves it to count the clusters that failed, more eager, never less.
    registeredClusterIds() {
      const now = Date.now();
      if (!listed || now - listed.at >= CLUSTER_LIST_CACHE_MS) listed = { at: now, ids: listClusterIds(options.management, options.machineApiVersion) };
      return listed.ids;
    },
    get(clusterId) {
      let entry = entries.get(clusterId);
      if (!entry) {
        entry = load(clusterId);
        // A Secret that could not be read is read again next time.
        entry.catch(() => entries.delete(clusterId));
        entries.set(clusterId, entry);
      }
      return entry;
    },
  };
}
