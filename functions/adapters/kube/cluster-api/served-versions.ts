// The versions of Cluster API's group the management cluster serves, from its discovery (GET /apis,
// which every authenticated user may read: system:discovery); undefined when the group is not served.
import { ApisApi, type KubeConfig } from '@kubernetes/client-node';
import { CAPI_GROUP } from './machines.ts';

export async function servedClusterApiVersions(management: KubeConfig): Promise<string[] | undefined> {
  const { groups } = await management.makeApiClient(ApisApi).getAPIVersions();
  return groups.find((group) => group.name === CAPI_GROUP)?.versions.map((v) => v.version);
}
