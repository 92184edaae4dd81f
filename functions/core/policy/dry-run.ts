// A dry run acts on nothing: what would be done is said, and the incident ends there. The policy
// is read afresh on every run, so a cluster switched to a dry run since approval is not touched.
import { type Decision, decidedBy } from '../common/index.ts';

/** An approval or a move becomes a DRY_RUN block saying it; any other decision stands. */
export function asDryRun(decision: Decision): Decision {
  if (decision.kind !== 'approve' && decision.kind !== 'move-leader') return decision;
  return decidedBy(
    { kind: 'block', reason: 'DRY_RUN', message: `Dry run, nothing done: ${decision.message}`, evidence: { ...decision.evidence, wouldDo: decision.kind } },
    'dry-run',
  );
}

/** remediate's look at the policy under the lock: approved, but a dry run now. */
export const dryRunSinceApproval = (who: string, clusterId: string): Decision =>
  decidedBy(
    {
      kind: 'block',
      reason: 'DRY_RUN',
      message: `Dry run, nothing done: removing ${who} was approved, but the policy of cluster ${clusterId} is now a dry run, so nothing is removed; blocked.`,
      evidence: { wouldDo: 'approve' },
    },
    'dry-run',
  );
