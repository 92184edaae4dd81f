// The actuator call is bounded by the policy's actuatorTimeoutMs: a call that never answers fails
// the step (the lock must not be held for ever) and its signal is aborted; any bound the policy
// accepts is waited out, even one past what a single timer can hold.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { remediate } from '../../../../functions/app/removal/remediate.ts';
import type { Actuator, ReplaceRequest } from '../../../../functions/ports/actuator.ts';
import { sample } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

/** Approves the removal of follower etcd-1 of three, and lets the two left elect etcd-0. */
async function approveFollower(actuator: Actuator): Promise<void> {
  h.deps.actuator = actuator;
  h.setSample((at) =>
    sample(
      at,
      [0, 1, 2].map((i) => ({ i, leader: 0 })),
    ),
  );
  h.onMemberRemove = () =>
    h.setSample((at) =>
      sample(
        at,
        [0, 2].map((i) => ({ i, leader: 0 })),
      ),
    );
  await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
  await moveLeader(h.deps, h.lastOf('MembersProbed'));
}

describe('the actuator, bounded by actuatorTimeoutMs', () => {
  it('a call that never answers fails the remediation within the bound, saying so, and its signal is aborted', async () => {
    h = harness({ actuatorTimeoutMs: 50 });
    const asked: ReplaceRequest[] = [];
    await approveFollower({ name: 'stuck', replace: (request) => (asked.push(request), new Promise(() => undefined)) });

    await remediate(h.deps, h.lastOf('RemediationApproved'));

    expect(h.lastOf('RemediationFailed')).toMatchObject({ reason: 'ACTUATOR_FAILED' });
    expect(h.lastOf('RemediationFailed').message).toContain('the stuck actuator could not replace its machine (no answer within 50 ms)');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.signal?.aborted).toBe(true);
  });

  it('a bound longer than one timer can hold (about 24.8 days) is waited, not taken as already over', async () => {
    h = harness({ actuatorTimeoutMs: 2 ** 31 + 1_000 });
    await approveFollower({ name: 'slow', replace: async () => sleep(20, { action: 'deleted', detail: 'machine deleted' }) });

    await remediate(h.deps, h.lastOf('RemediationApproved'));

    expect(h.events.map((e) => e.detailType)).not.toContain('RemediationFailed');
    expect(h.lastOf('RemediationCompleted')).toMatchObject({ clusterId: 'c1' });
  });
});
