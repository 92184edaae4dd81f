// The local cluster directory: clusters given by a config file or by CLI flags.
import { type ClusterDirectory, type ClusterEntry, UnknownClusterError } from '../../ports/cluster-directory.ts';

export function createStaticDirectory(
  entries: ClusterEntry[],
): ClusterDirectory & { list(): ClusterEntry[]; registeredClusterIds(): Promise<readonly string[]> } {
  const byId = new Map(entries.map((e) => [e.clusterId, e]));
  return {
    get: async (clusterId) => {
      const entry = byId.get(clusterId);
      if (!entry) throw new UnknownClusterError(clusterId);
      return entry;
    },
    registeredClusterIds: async () => [...byId.keys()],
    list: () => [...byId.values()],
  };
}
