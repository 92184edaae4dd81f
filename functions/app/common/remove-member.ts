// Step 4 of remediation: MemberRemove through the healthiest non-target member. The calls are made
// here; what each refusal means, and what is said once every member was asked, is core's.
import { rankMoveCandidates } from '../../core/plan/index.ts';
import { afterFailedRemove, everyMemberFailed, type FailedRemove, type RemoveOutcome } from '../../core/removal/index.ts';
import { describeMember, type ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import { EtcdCallError } from '../../ports/etcd.ts';
import type { ClusterDeps } from './deps.ts';

export type { RemoveOutcome } from '../../core/removal/index.ts';

export async function removeMember(deps: ClusterDeps, cluster: ClusterEntry, view: ClusterView, targetId: string): Promise<RemoveOutcome> {
  const { transport } = deps.etcdFor(cluster);
  const target = view.members.find((m) => m.id === targetId);
  const name = target ? describeMember(target) : targetId;
  const failed: FailedRemove[] = [];
  // The member with the highest applied index and lowest latency is the one most likely to answer.
  members: for (const via of rankMoveCandidates(view, targetId)) {
    for (const p of via.paths.filter((x) => x.reachability === 'ok')) {
      try {
        await transport.client({ endpoint: p.endpoint, path: p.path }).memberRemove(targetId, cluster.policy.callTimeoutMs);
        return { kind: 'removed', via: `${describeMember(via)} over ${p.path} ${p.endpoint}`, alreadyGone: false };
      } catch (error) {
        if (!(error instanceof EtcdCallError)) throw error;
        failed.push({ via: describeMember(via), path: p.path, endpoint: p.endpoint, failure: error.failure });
        const next = afterFailedRemove(name, failed);
        if (next === 'next-member') continue members;
        if (next !== 'next-path') return next;
      }
    }
  }
  return everyMemberFailed(name, failed);
}
