// One probe of a cluster, seeded from its configured endpoints and from every client URL the
// last view saw, so a member added since configuration is still found.
import { buildClusterView, type ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { ClusterDeps } from '../common/index.ts';

/** `deadlineMs`: the whole probe's deadline; the policy's call deadline unless a slow network asked for more. */
export async function probeCluster(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  previous?: ClusterView,
  deadlineMs = cluster.policy.callTimeoutMs,
): Promise<ClusterView> {
  const seen = previous?.members.flatMap((m) => m.clientUrls) ?? [];
  const seeds = [...new Set([...cluster.endpoints, ...seen])];
  const { prober } = deps.etcdFor(cluster);
  const sample = await prober.probe({
    seeds,
    deadlineMs,
    paths: cluster.policy.pathOrder,
  });
  return buildClusterView(sample);
}
