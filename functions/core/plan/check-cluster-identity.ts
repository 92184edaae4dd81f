// The planner's first check: answers from more than one etcd cluster make every other rule
// meaningless (whose quorum, whose leader, whose member list?), so the plan stops there.
import { clusterMismatch } from '../view/index.ts';
import { block } from './plan-context.ts';
import type { PlanCheck } from './plan-checks.ts';

export const clusterIdentityCheck: PlanCheck = {
  name: 'cluster-identity',
  run: (ctx) => {
    const mismatch = clusterMismatch(ctx.view);
    if (!mismatch) return 'pass';
    const decision = block(ctx, 'CLUSTER_MISMATCH', mismatch.message);
    return { ...decision, evidence: { ...decision.evidence, clusterIds: mismatch.ids, answeredWith: mismatch.reports } };
  },
};
