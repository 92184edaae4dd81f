// A directory answering the registry's question by reading the entry, for tests whose directory
// reads no secret.
import { UnknownClusterError, type ClusterDirectory, type ClusterRegistry } from '../../functions/ports/cluster-directory.ts';

export const registryOf = (directory: ClusterDirectory): ClusterRegistry => ({
  isRegistered: (clusterId) =>
    directory.get(clusterId).then(
      () => true,
      (error: unknown) => {
        if (error instanceof UnknownClusterError) return false;
        throw error;
      },
    ),
});
