// A NOSPACE alarm makes etcd refuse every write, the cluster lock and the removal record among
// them, and no member is removed without those. Maintenance clears it (core/maintenance: compact,
// defragment one member at a time, the leader last, disarm) unless the policy turns that off: the
// removal waits for it, asking for it each time (or for another disruption that holds it to end), and blocks only when the maintenance cannot run
// (off, no quorum margin, a CORRUPT alarm) or ended without clearing it since the incident opened,
// saying why. Said before any leader is moved for a removal that could not happen. A
// single-remediator cluster keeps the lock and the record in its state store, so it passes.
import { maintenancePlan, stalledByDefragmentation } from '../maintenance/index.ts';
import type { ClusterView } from '../view/index.ts';
import { describeTime, howReached, lowerFirst } from '../view/index.ts';
import { freeSpaceThenReport, noSpaceMembers } from '../removal/index.ts';
import { block, lookAgainAfterBackoff } from './plan-context.ts';
import type { PlanCheck } from './plan-checks.ts';

export const noSpaceCheck: PlanCheck = {
  name: 'etcd-writable',
  run: (ctx) => {
    const { policy, incident, now, maintenance } = ctx.input;
    if (policy.singleRemediator || !ctx.view) return 'pass';
    const alarmed = noSpaceMembers(ctx.view);
    if (alarmed.length === 0) return 'pass';
    // A member the maintenance was defragmenting as this look ran answered late for that alone: it is up to the run clearing the alarm.
    const stalled = stalledByDefragmentation(maintenance?.spans ?? [], ctx.view.at, policy.callTimeoutMs);
    const clearing = maintenancePlan({ view: upDespite(ctx.view, stalled), rules: policy.maintenance, lastDefragmentedAt: {}, now });
    // How the target was reached, as every outcome says it.
    const reached = ctx.target ? `, which ${howReached(ctx.target)},` : '';
    const standing = `a NOSPACE alarm (raised by ${alarmed.join(', ')}) stands, and etcd refuses every write while it does, so the cluster lock and the removal record cannot be written, and no member is removed without them`;
    // Once an incident: a run that ended without clearing it, or cleared it only for the alarm to come back.
    const last = maintenance?.lastRun && maintenance.lastRun.endedAt >= incident.openedAt ? maintenance.lastRun : undefined;
    const endedSince = last && (last.outcome === 'failed' || last.outcome === 'blocked') ? last : undefined;
    const clearedBefore = last?.outcome === 'done' && last.reason === 'MAINTENANCE_NOSPACE' ? last : undefined;
    const evidence = { alarmed, maintenance: { reason: clearing.reason, steps: clearing.steps.map((s) => s.kind) } };
    // An election is waited out as the clearing is: it ends in moments.
    if ((clearing.reason === 'MAINTENANCE_NOSPACE' || clearing.reason === 'MAINTENANCE_ELECTION') && !endedSince && !clearedBefore) {
      const decision = lookAgainAfterBackoff(
        ctx,
        'NOSPACE_CLEARING',
        `${ctx.name}${reached} is not removed yet: ${standing}; maintenance clears it: ${clearing.message}`,
      );
      return { ...decision, evidence: { ...decision.evidence, ...evidence } };
    }
    // Another disruption (a drain, a rollout) takes the margin a defragmentation needs: it ends, and the removal waits for it, naming it.
    if (clearing.reason === 'DISRUPTION_IN_PROGRESS' && !endedSince && !clearedBefore) {
      const decision = lookAgainAfterBackoff(
        ctx,
        'DISRUPTION_IN_PROGRESS',
        `${ctx.name}${reached} is not removed yet: ${standing}; maintenance clears it once another disruption ends: ${clearing.message}`,
      );
      return { ...decision, evidence: { ...decision.evidence, ...evidence } };
    }
    const why = endedSince
      ? `the maintenance that clears it ended ${endedSince.outcome} (${endedSince.endReason}): ${endedSince.message}`
      : clearedBefore
        ? `the maintenance cleared it at ${describeTime(clearedBefore.endedAt)} and it was raised again: the live data fills the quota; raise --quota-backend-bytes on every member, or delete keys`
        : clearing.message;
    const decision = block(
      ctx,
      'ETCD_NO_SPACE',
      `${ctx.name}${reached} is not removed: ${standing}; nothing was removed; blocked: ${lowerFirst(why.replace(/\.$/, ''))}; otherwise ${freeSpaceThenReport(ctx.name)}`,
    );
    return { ...decision, evidence: { ...decision.evidence, ...evidence } };
  },
};

/** The view with `stalled` counted healthy: members only our own defragmentation kept from answering. */
function upDespite(view: ClusterView, stalled: readonly string[]): ClusterView {
  if (stalled.length === 0) return view;
  return { ...view, members: view.members.map((m) => (stalled.includes(m.id) && !m.healthy ? { ...m, healthy: true, reachable: true, started: true } : m)) };
}
