// The holds in etcd (a pause, a storm hold) are read before a move is planned and under the lock
// before a removal: holds etcd does not answer for are no answer, so nothing is moved or removed
// until they are read; a pause found there holds the removal; once they read, the step goes on.
import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { remediate } from '../../../../functions/app/removal/remediate.ts';
import type { EtcdFailure } from '../../../../functions/core/common/types.ts';
import { sample, type MemberSpec } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const three = (leader: number): MemberSpec[] => [0, 1, 2].map((i) => ({ i, leader }));
const timeout: EtcdFailure = { kind: 'timeout', grpcCode: 4, message: 'Deadline exceeded after 2.000s' };

describe('holds etcd does not answer for', () => {
  it('a follower’s removal is not approved while the holds cannot be read: LOCK_UNAVAILABLE, nothing removed', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    h.guard.failing.holds = timeout;
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));
    expect(decision).toMatchObject({ kind: 'retry', reason: 'LOCK_UNAVAILABLE', evidence: { decidedBy: 'fleet-holds', action: 'read the pauses and holds' } });
    expect(decision?.message).toMatch(/we could not read the pauses and holds/);
    expect(h.calls.memberRemove).toEqual([]);
  });

  it('approved, then the holds fail under the lock: nothing removed', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    expect(await moveLeader(h.deps, h.lastOf('MembersProbed'))).toMatchObject({ kind: 'approve' });
    h.guard.failing.holds = timeout;
    expect(await remediate(h.deps, h.lastOf('RemediationApproved'))).toMatchObject({ kind: 'retry', reason: 'LOCK_UNAVAILABLE' });
    expect(h.calls.memberRemove).toEqual([]);
  });

  it('approved, then a pause is written into etcd from another state file: the removal is held under the lock', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    expect(await moveLeader(h.deps, h.lastOf('MembersProbed'))).toMatchObject({ kind: 'approve' });
    h.guard.kept.pause = { by: 'ops@box', at: h.clock.now(), why: 'upgrade', where: 'state file /x.sqlite on box', key: '/etcd-remediator/holds/pause' };
    const held = await remediate(h.deps, h.lastOf('RemediationApproved'));
    expect(held).toMatchObject({ kind: 'retry', reason: 'PAUSED' });
    expect((held as { message: string }).message).toMatch(/kept in etcd key \/etcd-remediator\/holds\/pause, written from state file \/x.sqlite on box/);
    expect(h.calls.memberRemove).toEqual([]);
  });
});
