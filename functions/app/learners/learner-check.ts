// The periodic learner check: a kubeadm join that failed half-way with no incident open leaves its
// learner for ever, so every learnerCheckEveryMs each cluster is probed, its learners' first
// sightings kept (the one record per cluster every incident reads too), and a learner stuck past
// stuckLearnerAfterMs removed (stuck-learners.ts). It opens no incident, writes no removal record
// and takes no fleet slot: the storm guard and the one-member-down rule never count it. A pause
// holds it, and a remediation holding the cluster lock leaves it to the next check.
import type { DetailOf } from '../../../events/catalogue.ts';
import { learnerCheckDue, learnersIn, stuckLearners } from '../../core/learners/index.ts';
import type { MemberId } from '../../core/common/index.ts';
import { UnknownClusterError, type ClusterEntry } from '../../ports/cluster-directory.ts';
import { type ClusterDeps, iso } from '../common/index.ts';
import { probeCluster } from '../view/index.ts';
import { learnerRemovedEvent, removeStuckLearners, sightLearners } from './stuck-learners.ts';

export type LearnerCheck =
  /** learnerCheckEveryMs or stuckLearnerAfterMs is 0. */
  | { kind: 'off' }
  /** AWS: this round is not one the cluster's learnerCheckEveryMs falls in; or the cluster left the directory. */
  | { kind: 'not-due' | 'unknown-cluster' }
  | { kind: 'checked'; learners: MemberId[]; stuck: MemberId[]; removed: MemberId[] };

export async function checkClusterLearners(deps: ClusterDeps, cluster: ClusterEntry): Promise<LearnerCheck> {
  const { policy, clusterId } = cluster;
  if (policy.learnerCheckEveryMs === 0 || policy.stuckLearnerAfterMs === 0) return { kind: 'off' };
  const view = await probeCluster(deps, cluster);
  const firstSeen = await sightLearners(deps, clusterId, view);
  const stuck = stuckLearners(view, firstSeen, { now: deps.clock.now(), policy });
  const removals = await removeStuckLearners(deps, cluster, view, stuck, { holder: `learner-check:${clusterId}`, logKeys: { clusterId, by: 'learner check' } });
  const removed = removals.map((r) => r.learner.member.id);
  if (removed.length > 0) {
    // Gone from etcd: their sightings go too, not only at the next look.
    await deps.store.saveLearnerSightings(clusterId, Object.fromEntries(Object.entries(firstSeen).filter(([id]) => !removed.includes(id))));
  }
  if (removals.length > 0) {
    const events = removals.map((r) => learnerRemovedEvent({ clusterId, at: iso(r.at) }, r));
    await deps.bus.publish(...events);
    // No outbox carries them, so nothing publishes them again: out for good, and counted (LearnerRemoved).
    await deps.bus.settled?.(events);
  }
  return { kind: 'checked', learners: learnersIn(view), stuck: stuck.map((s) => s.member.id), removed };
}

/**
 * One cluster's check as a round of the AWS schedule asked for it (LearnerCheckDue): run when the
 * round is one its learnerCheckEveryMs falls in. A cluster deregistered since the round is skipped.
 */
export async function learnerCheckAsked(deps: ClusterDeps, detail: DetailOf<'LearnerCheckDue'>): Promise<LearnerCheck> {
  const cluster = await deps.directory.get(detail.clusterId).catch((error: unknown) => {
    if (error instanceof UnknownClusterError) return undefined;
    throw error;
  });
  if (!cluster) {
    deps.log.info('learner check skipped: the cluster is no longer registered', { clusterId: detail.clusterId });
    return { kind: 'unknown-cluster' };
  }
  if (!learnerCheckDue(Date.parse(detail.at), cluster.policy.learnerCheckEveryMs))
    return { kind: cluster.policy.learnerCheckEveryMs === 0 ? 'off' : 'not-due' };
  return checkClusterLearners(deps, cluster);
}
