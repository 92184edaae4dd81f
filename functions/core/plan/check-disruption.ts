// No removal during another disruption (core/view's disruption.ts says which members may go down
// any moment): a removal that would leave no quorum with them down waits, naming the Node or
// Machine. Only a voting target changes the votes.
import { atRiskMembers, describeMember, disruptionOf, listWords } from '../view/index.ts';
import { lookAgainAfterBackoff } from './plan-context.ts';
import type { PlanCheck } from './plan-checks.ts';

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
