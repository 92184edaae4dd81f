// Every decision remediate and a failed step make names the core rule that made it, as the
// planner's checks do: evidence.decidedBy, on the decision kept and on the outcome said.
import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { remediate } from '../../../../functions/app/removal/remediate.ts';
import { stepFailed } from '../../../../functions/app/incident/step-failed.ts';
import { makeEvent } from '../../../../events/catalogue.ts';
import { EtcdCallError } from '../../../../functions/ports/etcd.ts';
import { sample } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

/** Follower etcd-1 of three approved for removal; `arrange` runs before remediate. */
async function remediateFollower(arrange: () => void | Promise<void> = () => undefined) {
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
  await arrange();
  return remediate(h.deps, h.lastOf('RemediationApproved'));
}

const refused = (message: string) => () => {
  throw new EtcdCallError({ kind: 'other', grpcCode: 2, message });
};

describe('remediate: each decision names its rule', () => {
  it.each<{ rule: string; reason: string; policy?: Record<string, unknown>; arrange: () => void | Promise<void> }>([
    { rule: 'cluster-lock', reason: 'CLUSTER_LOCKED', arrange: async () => void (await h.guard.acquire('incident:other:0000', 30_000)) },
    {
      rule: 'snapshot-before-remove',
      reason: 'SNAPSHOT_FAILED',
      policy: { snapshotBeforeRemove: true },
      arrange: () => void (h.onSnapshot = refused('etcdserver: request timed out')),
    },
    { rule: 'member-remove', reason: 'ETCD_TRANSIENT', arrange: () => void (h.onMemberRemove = refused('etcdserver: unhealthy cluster')) },
    {
      rule: 'leads-again',
      reason: 'LEADER_CHANGED',
      arrange: () =>
        h.setSample((at) =>
          sample(
            at,
            [0, 1, 2].map((i) => ({ i, leader: 1 })),
          ),
        ),
    },
    { rule: 'dry-run', reason: 'DRY_RUN', arrange: () => void (h.cluster.policy = { ...h.cluster.policy, dryRun: true }) },
  ])('$reason: $rule', async ({ rule, reason, policy, arrange }) => {
    h = harness(policy);
    const decision = await remediateFollower(arrange);
    expect(decision).toMatchObject({ reason, evidence: { decidedBy: rule } });
    expect((await h.deps.store.listIncidents())[0]?.lastDecision?.evidence.decidedBy).toBe(rule);
    expect(h.calls.memberRemove.length).toBeLessThanOrEqual(1);
  });

  it('ACTUATOR_FAILED: the failure said names the actuator rule', async () => {
    h = harness();
    h.deps.actuator = { name: 'broken', replace: async () => Promise.reject(new Error('Machine is being deleted')) };
    expect(await remediateFollower()).toBe('failed');
    expect(h.lastOf('RemediationFailed')).toMatchObject({ reason: 'ACTUATOR_FAILED', evidence: { decidedBy: 'actuator' } });
  });
});

describe('a step that failed on every delivery', () => {
  it('is blocked by the step-failed rule once its budget is spent, naming the member and how it was reached', async () => {
    h = harness({ maxAttempts: 1 });
    h.setSample((at) =>
      sample(
        at,
        [0, 1, 2].map((i) => ({ i, leader: 0 })),
      ),
    );
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    await moveLeader(h.deps, h.lastOf('MembersProbed'));
    const approved = makeEvent('RemediationApproved', h.lastOf('RemediationApproved'));
    expect(await stepFailed(h.deps, 'remediate', approved, new Error('out of memory'))).toBe('blocked');
    expect(h.lastOf('RemediationBlocked')).toMatchObject({
      reason: 'STEP_FAILED',
      evidence: { decidedBy: 'step-failed', functionName: 'remediate', error: 'out of memory' },
    });
    expect(h.lastOf('RemediationBlocked').message).toMatch(
      /^The remediate step for etcd-1 \(91bc3c398fb3c146\), which answers on direct http:\/\/127\.0\.0\.1:4011, failed on every delivery of RemediationApproved \(attempt 0\): out of memory; blocked, since the attempt budget of 1 is spent\./,
    );
  });
});
