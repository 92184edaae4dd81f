// On a slow network a probe whose every seed timed out learns nothing, and the next one with the
// same deadline would learn nothing too: each such probe in a row doubles the deadline, up to a cap.
import type { Policy } from '../policy/index.ts';
import { quorumSize, type ClusterView, type MemberView } from '../view/index.ts';

/** The longest a probe may wait: the call deadline, or 30 s when that is shorter. */
export const maxProbeDeadlineMs = (policy: Pick<Policy, 'callTimeoutMs'>): number => Math.max(policy.callTimeoutMs, 30_000);

/** No member list, and every seed that was asked ran out of time. */
export const timedOutEverywhere = (view: ClusterView): boolean =>
  view.members.length === 0 && view.listFailures.length > 0 && view.listFailures.every((f) => f.reachability === 'timeout');

/** Every path to the member was tried and each ran out of time: it may be slow rather than gone. */
export const timedOutOnEveryPath = (member: MemberView): boolean => member.paths.length > 0 && member.paths.every((p) => p.reachability === 'timeout');

/**
 * Members that only ran out of time leave too few healthy voting members for any one to be
 * removed: the quorum gate's refusal may be the network's or a loaded member's slowness, and the
 * next probe must wait longer to tell (a member that refused, or answered unhealthy, is no such doubt).
 */
export function quorumShortBySlowness(view: ClusterView): boolean {
  const voting = view.members.filter((m) => !m.isLearner);
  const healthy = voting.filter((m) => m.healthy).length;
  return healthy < quorumSize(voting.length - 1) && voting.some((m) => !m.healthy && timedOutOnEveryPath(m));
}

/** How many of the newest views in a row hold `holds`. */
export function inARow(views: readonly ClusterView[], holds: (view: ClusterView) => boolean): number {
  let count = 0;
  for (let i = views.length - 1; i >= 0 && holds(views[i]!); i--) count++;
  return count;
}

/** The slowest answer (a path that answered) the probe measured from these members, in ms; 0 when none answered. */
export const slowestAnswerMs = (members: readonly MemberView[]): number =>
  Math.max(0, ...members.flatMap((m) => m.paths.filter((p) => p.reachability === 'ok').map((p) => p.latencyMs ?? 0)));

/**
 * The deadline for the next probe, after `views` (oldest first). A probe in which some members
 * answered slowly would see the next one time out on them at the call deadline, and call them
 * unreachable (and the quorum gate would refuse): so at least twice the slowest answer the last
 * probe measured. Each probe in a row that learned nothing for the slowness (every seed timed
 * out, or members that timed out leave the cluster short of a quorum) doubles it.
 */
export function probeDeadlineMs(policy: Pick<Policy, 'callTimeoutMs'>, views: readonly ClusterView[]): number {
  const slow = inARow(views, (view) => timedOutEverywhere(view) || quorumShortBySlowness(view));
  const doubled = policy.callTimeoutMs * 2 ** slow;
  return Math.min(Math.max(doubled, 2 * slowestAnswerMs(views.at(-1)?.members ?? [])), maxProbeDeadlineMs(policy));
}

/**
 * The deadline of each call for the cluster lock and the removal record. A slow network that
 * lets a probe through in 2.8 s would time every lock call out at a 2 s call deadline, and no
 * removal happens without the lock: so twice the slowest answer the newest probe measured from
 * the members the guard asks (the healthy ones other than the target), never below the call deadline, and at most a third of the lock's
 * lease, so that a renewal still lands inside the lease it renews.
 */
export function guardDeadlineMs(policy: Pick<Policy, 'callTimeoutMs' | 'lockLeaseMs'>, asked: readonly MemberView[]): number {
  const slowest = slowestAnswerMs(asked);
  return Math.max(policy.callTimeoutMs, Math.min(2 * slowest, Math.floor(policy.lockLeaseMs / 3)));
}
