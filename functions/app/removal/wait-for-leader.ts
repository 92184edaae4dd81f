// Step 5 of remediation: wait until the remaining members agree on a leader other than the target.
import { probeDeadlineMs, electionWaitMs } from '../../core/budget/index.ts';
import type { ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import { waitWithin } from '../../lib/wait-for.ts';
import type { ClusterDeps } from '../common/index.ts';
import { probeCluster } from '../view/index.ts';

export interface ElectedLeader {
  id: string;
  name: string;
  term: number;
}

/**
 * Undefined when no leader stood within the wait; the caller retries rather than guess. A probe
 * that throws (the store, a bug: the probe itself says etcd's failures in the view) is no "no
 * leader yet": it ends the wait and the step fails with it.
 */
export async function waitForNewLeader(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  removedId: string,
  previous?: ClusterView,
): Promise<ElectedLeader | undefined> {
  const timeoutMs = electionWaitMs(cluster.policy);
  // The removed member is no seed any more: a dead one would cost every probe its whole deadline.
  const seedsWithout = previous && { ...previous, members: previous.members.filter((m) => m.id !== removedId) };
  // A slow network measured by the last probe is slow for these too.
  const deadlineMs = probeDeadlineMs(cluster.policy, seedsWithout ? [seedsWithout] : []);
  return waitWithin(
    async () => {
      const view = await probeCluster(deps, cluster, seedsWithout, deadlineMs);
      const { leader } = view;
      const rest = view.members.filter((m) => m.id !== removedId);
      // Agreed on the leader and on its term: right after an election a member may still say the old term.
      if (leader.consensus !== 'agreed' || !leader.id || leader.id === removedId || leader.term === undefined) return undefined;
      if (!rest.some((m) => m.id === leader.id)) return undefined;
      return { id: leader.id, name: leader.name ?? '', term: leader.term };
    },
    { timeoutMs, intervalMs: 50, what: 'a leader among the remaining members', clock: deps.clock },
  );
}
