// A NOSPACE alarm makes etcd refuse every write, the cluster lock and the removal record among
// them, and no member is removed without those. Said before any leader is moved for a removal
// that could not happen. A single-remediator cluster keeps both in its state store, so it passes.
import { block } from './plan-context.ts';
import type { PlanCheck } from './plan-checks.ts';

export const noSpaceCheck: PlanCheck = {
  name: 'etcd-writable',
  run: (ctx) => {
    if (ctx.input.policy.singleRemediator) return 'pass';
    const alarmed = (ctx.view?.members ?? []).filter((m) => m.status?.alarms.includes('NOSPACE')).map((m) => m.name || m.id);
    if (alarmed.length === 0) return 'pass';
    const decision = block(
      ctx,
      'ETCD_NO_SPACE',
      `${ctx.name} is not removed: a NOSPACE alarm (raised by ${alarmed.join(', ')}) stands, and etcd refuses every write while it does, ` +
        'so the cluster lock and the removal record cannot be written, and no member is removed without them; nothing was removed; blocked: ' +
        'free space (etcdctl compact, then etcdctl defrag on each member, or a larger --quota-backend-bytes), then run `etcdctl alarm disarm`, ' +
        `and report ${ctx.name} again.`,
    );
    return { ...decision, evidence: { ...decision.evidence, alarmed } };
  },
};
