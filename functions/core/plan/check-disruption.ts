// No action during another disruption: a member whose Node is cordoned (a drain stops its pods;
// Cluster API's drain and every kubectl drain begin with a cordon) or whose Machine is deleting
// may go down at any moment, so it counts as down in the quorum projection. A removal that would
// leave no quorum with it down waits, naming the Node or Machine, as openshift's
// cluster-etcd-operator gates etcd restarts on a cordon. Only a voting target changes the votes.
import { describeMember, type MemberView } from '../view/index.ts';
import { listWords } from '../view/index.ts';
import { lookAgainAfterBackoff } from './plan-context.ts';
import type { PlanCheck } from './plan-checks.ts';

/** Why a member may go down any moment now; undefined when nothing says so. */
export function disruptionOf(m: MemberView): string | undefined {
  if (m.host?.machine?.deleting) return `its Machine ${m.host.machine.name} is being deleted`;
  if (m.host?.cordoned) return `its Node ${m.host.node ?? m.name} is cordoned (a drain stops its pods)`;
  return undefined;
}

/** The healthy voting members other than the target that a disruption may take down. */
export const atRiskMembers = (members: readonly MemberView[], targetId: string): MemberView[] =>
  members.filter((m) => m.id !== targetId && !m.isLearner && m.healthy && disruptionOf(m) !== undefined);

export const disruptionCheck: PlanCheck = {
  name: 'no-other-disruption',
  run: (ctx) => {
    const { view, target, gate } = ctx;
    if (!view || !target || target.isLearner || !gate?.ok) return 'pass';
    const atRisk = atRiskMembers(view.members, target.id);
    const { healthyAfter, votingAfter, needed } = gate.figures;
    if (atRisk.length === 0 || healthyAfter - atRisk.length >= needed) return 'pass';
    const why = listWords(atRisk.map((m) => `${describeMember(m)}: ${disruptionOf(m)}`));
    const decision = lookAgainAfterBackoff(
      ctx,
      'DISRUPTION_IN_PROGRESS',
      `Removing ${ctx.name} would leave ${healthyAfter} of ${votingAfter} voting members healthy, the quorum of ${needed} with no margin, while another disruption may take ${atRisk.length === 1 ? 'one of them' : `${atRisk.length} of them`} down (${why}); nothing is removed until it ends (uncordon the Node, or let the Machine go and its replacement join)`,
    );
    return { ...decision, evidence: { ...decision.evidence, atRisk: atRisk.map((m) => ({ member: m.id, why: disruptionOf(m) })) } };
  },
};
