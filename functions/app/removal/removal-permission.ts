// Whether etcd will let us remove the target, asked through a healthy member before anything is
// moved or approved (the rule is core/plan/removal-permission.ts): a removal etcd would refuse must not
// cost the cluster an election first.
import { rankMoveCandidates, needsRemovalPermission, withRemovalPermission, type PermissionAnswer } from '../../core/plan/index.ts';
import type { Decision } from '../../core/common/index.ts';
import { describeMember, memberGone, type ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import { EtcdCallError, type EtcdTransport } from '../../ports/etcd.ts';
import type { ClusterDeps } from '../common/index.ts';

/** The members a removal would go through, in the same order; the first that answers decides. */
export async function askRemovalPermission(transport: EtcdTransport, view: ClusterView, targetId: string, deadlineMs: number): Promise<PermissionAnswer> {
  for (const member of rankMoveCandidates(view, targetId)) {
    for (const p of member.paths.filter((x) => x.reachability === 'ok')) {
      const client = transport.client({ endpoint: p.endpoint, path: p.path });
      if (!client.checkAdminPermission) continue;
      const via = `${describeMember(member)} over ${p.path} ${p.endpoint}`;
      try {
        await client.checkAdminPermission(deadlineMs);
        return { permitted: true, via };
      } catch (error) {
        if (!(error instanceof EtcdCallError)) throw error;
        // Nobody answered there: the next member may.
        if (error.failure.kind === 'refused' || error.failure.kind === 'timeout') continue;
        return { permitted: false, via, failure: error.failure };
      }
    }
  }
  return undefined;
}

/** `decision`, or a block when etcd would refuse the removal it leads to. */
export async function checkRemovalPermission(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  view: ClusterView,
  targetId: string | undefined,
  decision: Decision,
): Promise<Decision> {
  // A member already out of the list needs no removal.
  if (targetId === undefined || !needsRemovalPermission(decision) || memberGone(view, targetId)) return decision;
  const target = view.members.find((m) => m.id === targetId);
  const answer = await askRemovalPermission(deps.etcdFor(cluster).transport, view, targetId, cluster.policy.callTimeoutMs);
  return withRemovalPermission(decision, answer, { who: target ? describeMember(target) : targetId, user: cluster.auth?.username });
}
