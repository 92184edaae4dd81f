// A NOSPACE alarm makes etcd refuse every write, the cluster lock and the removal record among
// them, and no member is removed without those. Said before any leader is moved for a removal
// that could not happen. A single-remediator cluster keeps both in its state store, so it passes.
import { freeSpaceThenReport, noSpaceMembers } from '../removal/index.ts';
import { block } from './plan-context.ts';
import type { PlanCheck } from './plan-checks.ts';

export const noSpaceCheck: PlanCheck = {
  name: 'etcd-writable',
  run: (ctx) => {
    if (ctx.input.policy.singleRemediator) return 'pass';
    const alarmed = noSpaceMembers(ctx.view);
    if (alarmed.length === 0) return 'pass';
    const decision = block(
      ctx,
      'ETCD_NO_SPACE',
      `${ctx.name} is not removed: a NOSPACE alarm (raised by ${alarmed.join(', ')}) stands, and etcd refuses every write while it does, ` +
        `so the cluster lock and the removal record cannot be written, and no member is removed without them; nothing was removed; blocked: ${freeSpaceThenReport(ctx.name)}`,
    );
    return { ...decision, evidence: { ...decision.evidence, alarmed } };
  },
};
