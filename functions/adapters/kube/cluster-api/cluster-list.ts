// Every Cluster API Cluster of the management cluster, by id (namespace/name), for the fleet storm
// guard's share of the registered clusters. One list call, every namespace.
import { CustomObjectsApi, type KubeConfig, type KubernetesListObject } from '@kubernetes/client-node';
import type { MachineApiVersion } from '../../../ports/kube-access.ts';

interface ClusterObject {
  metadata?: { name?: string; namespace?: string };
}

/** Undefined when the Clusters cannot be listed (an RBAC of an earlier release grants get only). */
export async function listClusterIds(management: KubeConfig, version: MachineApiVersion = 'v1beta1'): Promise<readonly string[] | undefined> {
  try {
    const customObjects = management.makeApiClient(CustomObjectsApi);
    const list = (await customObjects.listClusterCustomObject({
      group: 'cluster.x-k8s.io',
      version,
      plural: 'clusters',
    })) as KubernetesListObject<ClusterObject>;
    return list.items.flatMap((c) => (c.metadata?.name && c.metadata.namespace ? [`${c.metadata.namespace}/${c.metadata.name}`] : []));
  } catch {
    return undefined;
  }
}
