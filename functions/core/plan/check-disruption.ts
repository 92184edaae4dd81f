// No removal during another disruption (core/view's disruption.ts says which members may go down
// any moment): a removal that would leave no quorum with them down waits, naming the Node or
// Machine. Only a voting target changes the votes. A member a maintenance run is defragmenting now
// (its step claimed in the record) is one more: the cluster lock keeps the two apart, but a lock
// whose lease lapsed mid-step does not, and a member being defragmented may still answer a Status.
import { atRiskMembers, describeMember, describeTime, disruptionOf, listWords, rolloutOf, type MemberView } from '../view/index.ts';
import type { PlanContext } from './plan-context.ts';
import { lookAgainAfterBackoff } from './plan-context.ts';
import type { PlanCheck } from './plan-checks.ts';

export const disruptionCheck: PlanCheck = {
  name: 'no-other-disruption',
  run: (ctx) => {
    const { view, target, gate } = ctx;
    if (!view || !target || target.isLearner || !gate?.ok) return 'pass';
    const atRisk = atRiskMembers(view.members, target.id);
    const defragmenting = defragmentingNow(ctx, atRisk);
    // Each member that may go down, and why: those the view marks, and the one our maintenance stalls.
    const risks = [...atRisk.map((m) => ({ member: m, why: disruptionOf(m)! })), ...(defragmenting ? [defragmenting] : [])];
    const rollout = rolloutOf(view);
    const down = risks.length + (rollout ? 1 : 0);
    const { healthyAfter, votingAfter, needed } = gate.figures;
    if (down === 0 || healthyAfter - down >= needed) return 'pass';
    const why = listWords([...risks.map((r) => `${describeMember(r.member)}: ${r.why}`), ...(rollout ? [rollout] : [])]);
    const decision = lookAgainAfterBackoff(
      ctx,
      'DISRUPTION_IN_PROGRESS',
      `Removing ${ctx.name} would leave ${healthyAfter} of ${votingAfter} voting members healthy, the quorum of ${needed} with no margin, while another disruption may take ${down === 1 ? 'one of them' : `${down} of them`} down (${why}); nothing is removed until it ends (uncordon the Node, or let the Machine go and its replacement join)`,
    );
    return {
      ...decision,
      evidence: { ...decision.evidence, atRisk: risks.map((r) => ({ member: r.member.id, why: r.why })), ...(rollout ? { rollout } : {}) },
    };
  },
};

/** The healthy voting member, other than the target and those already at risk, a maintenance run defragments now. */
function defragmentingNow(ctx: PlanContext, atRisk: readonly MemberView[]): { member: MemberView; why: string } | undefined {
  const inFlight = ctx.input.maintenance?.inFlight;
  if (!inFlight || inFlight.until <= ctx.input.now) return undefined;
  const member = ctx.view?.members.find((m) => m.id === inFlight.member);
  if (!member || member.id === ctx.target?.id || member.isLearner || !member.healthy || atRisk.includes(member)) return undefined;
  return { member, why: `maintenance run ${inFlight.runId} is defragmenting it (its step claimed until ${describeTime(inFlight.until)})` };
}
