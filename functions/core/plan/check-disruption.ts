// No removal during another disruption (core/view's disruption.ts says which members may go down
// any moment): a removal that would leave no quorum with them down waits, naming the Node or
// Machine. Only a voting target changes the votes.
import { atRiskMembers, describeMember, disruptionOf, listWords, rolloutOf } from '../view/index.ts';
import { lookAgainAfterBackoff } from './plan-context.ts';
import type { PlanCheck } from './plan-checks.ts';

export const disruptionCheck: PlanCheck = {
  name: 'no-other-disruption',
  run: (ctx) => {
    const { view, target, gate } = ctx;
    if (!view || !target || target.isLearner || !gate?.ok) return 'pass';
    const atRisk = atRiskMembers(view.members, target.id);
    const rollout = rolloutOf(view);
    const down = atRisk.length + (rollout ? 1 : 0);
    const { healthyAfter, votingAfter, needed } = gate.figures;
    if (down === 0 || healthyAfter - down >= needed) return 'pass';
    const why = listWords([...atRisk.map((m) => `${describeMember(m)}: ${disruptionOf(m)}`), ...(rollout ? [rollout] : [])]);
    const decision = lookAgainAfterBackoff(
      ctx,
      'DISRUPTION_IN_PROGRESS',
      `Removing ${ctx.name} would leave ${healthyAfter} of ${votingAfter} voting members healthy, the quorum of ${needed} with no margin, while another disruption may take ${down === 1 ? 'one of them' : `${down} of them`} down (${why}); nothing is removed until it ends (uncordon the Node, or let the Machine go and its replacement join)`,
    );
    return {
      ...decision,
      evidence: { ...decision.evidence, atRisk: atRisk.map((m) => ({ member: m.id, why: disruptionOf(m) })), ...(rollout ? { rollout } : {}) },
    };
  },
};
