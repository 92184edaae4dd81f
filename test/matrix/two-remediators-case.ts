// Case 18: two remediators at once on one cluster, with separate state files.
import { startPipeline } from '../integration/e2e/pipeline.ts';
import { check, says, type MatrixCase } from './harness.ts';
import { followersOf, membershipIs } from './lab-checks.ts';

export const twoRemediatorsAtOnce: MatrixCase = {
    n: 18,
    name: 'two-remediators-at-once',
    members: 3,
    expected: 'removed+blocked',
    // The second remediator learns of the first's incident from the cluster's own etcd; which of its
    // records it meets first depends on timing (the open incident, then the removal record).
    reason: 'TARGET_IS_FOLLOWER+DUPLICATE_INCIDENT',
    alsoReasons: ['TARGET_IS_FOLLOWER+REPLACEMENT_PENDING', 'TARGET_IS_FOLLOWER+TARGET_NOT_FOUND'],
    async arrange(lab) {
      const { followers } = await followersOf(lab);
      return { targets: [followers[0]!] };
    },
    // Two runtimes with separate state files (as the `run` service and a CLI would be), the same
    // report given to both at once; the lock and removal record in the cluster's etcd decide.
    async act(ctx) {
      const second = await startPipeline(ctx.lab);
      ctx.others.push(second);
      const target = ctx.arranged.targets[0]!;
      const outcomes = await Promise.all([ctx.pipeline.remediate(target.name, 45_000), second.remediate(target.name, 45_000)]);
      // The removal first, then the other remediator's outcome.
      return outcomes.sort((a, b) => (a.detailType === 'RemediationCompleted' ? -1 : b.detailType === 'RemediationCompleted' ? 1 : 0));
    },
    async verify({ lab, arranged }, { outcomes, deciding }) {
      const target = arranged.targets[0]!;
      return [
        ...check(outcomes.filter((o) => o.detailType === 'RemediationCompleted').length === 1, 'not exactly one remediator removed the member'),
        ...says('other remediator', deciding.message, [target.name]),
        ...(await membershipIs(lab, [target])),
      ];
    },
  };
