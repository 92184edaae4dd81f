// The local cluster directory: clusters given by a config file or by CLI flags.
import type { ClusterDirectory, ClusterEntry } from '../../ports/cluster-directory.ts';
import { UnknownClusterError } from '../../ports/cluster-directory.ts';

export function createStaticDirectory(entries: ClusterEntry[]): ClusterDirectory & { list(): ClusterEntry[]; registeredCount(): Promise<number> } {
  const byId = new Map(entries.map((e) => [e.clusterId, e]));
  return {
    get: async (clusterId) => {
      const entry = byId.get(clusterId);
      if (!entry) throw new UnknownClusterError(clusterId);
      return entry;
    },
    registeredCount: async () => byId.size,
    list: () => [...byId.values()],
  };
}
