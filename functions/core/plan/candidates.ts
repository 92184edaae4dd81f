// Who may take leadership from the target: the most caught-up, fastest healthy voter first.
import type { ClusterView, MemberView } from '../view/index.ts';
import type { MemberId } from '../common/index.ts';

const applied = (m: MemberView): number => m.status?.raftAppliedIndex ?? -1;
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const latency = (m: MemberView): number => m.latencyMs ?? Number.POSITIVE_INFINITY;

/** Voting, reachable, healthy members other than the target and those being remediated themselves. */
export function rankMoveCandidates(view: ClusterView, targetId: MemberId, exclude: MemberId[] = []): MemberView[] {
  const excluded = new Set([targetId, ...exclude]);
  return view.members
    .filter((m) => !m.isLearner && m.reachable && m.healthy && !excluded.has(m.id))
    .sort((a, b) => applied(b) - applied(a) || latency(a) - latency(b) || compareText(a.name, b.name) || compareText(a.id, b.id));
}
