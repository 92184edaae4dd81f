// move-leader asks the core's target check for a selector that matched no member, and a removal
// with no healthy member to go through says so in a reason of its own.
import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { removeMember } from '../../../../functions/app/common/remove-member.ts';
import { id, sample, view as viewOf } from '../../core/fixtures.ts';
import { EtcdCallError } from '../../../../functions/ports/etcd.ts';
import { harness, T0, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

describe('move-leader, for a selector that matched no member', () => {
  it('blocks as TARGET_NOT_FOUND, as the core check says it', async () => {
    h = harness();
    h.setSample((at) =>
      sample(
        at,
        [0, 1, 2].map((i) => ({ i, leader: 0 })),
      ),
    );
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-9') });
    const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));
    expect(decision).toEqual({
      kind: 'block',
      reason: 'TARGET_NOT_FOUND',
      message:
        'No etcd member matches memberName etcd-9 (members: etcd-0, which answers on direct http://127.0.0.1:4001; etcd-1, which answers on direct http://127.0.0.1:4011; etcd-2, which answers on direct http://127.0.0.1:4021); blocked, it may already be removed: check the member list.',
      evidence: { target: { memberName: 'etcd-9' }, members: 'etcd-0, etcd-1, etcd-2' },
    });
    expect(h.lastOf('RemediationBlocked')).toMatchObject({ reason: 'TARGET_NOT_FOUND' });
  });
});

describe('removeMember with no healthy member to ask', () => {
  it('retries with NO_HEALTHY_MEMBER, not a leader-move reason', async () => {
    h = harness();
    const view = viewOf(T0, [
      { i: 0, leader: 0 },
      { i: 1, leader: 0, paths: 'refused' },
      { i: 2, leader: 0, paths: 'refused' },
    ]);
    const removed = await removeMember(h.deps, h.cluster, view, id(0));
    expect(removed).toMatchObject({ kind: 'retry', reason: 'NO_HEALTHY_MEMBER', failures: [] });
    expect(removed.kind !== 'removed' && removed.message).toMatch(/^No healthy member is left to remove etcd-0/);
    expect(h.calls.memberRemove).toEqual([]);
  });
});

describe('removeMember when every member refuses our credentials', () => {
  it('blocks naming the credential, as the planner and the move do, instead of retrying', async () => {
    h = harness();
    const view = viewOf(
      T0,
      [0, 1, 2].map((i) => ({ i, leader: 0 })),
    );
    h.onMemberRemove = () => {
      throw new EtcdCallError({ kind: 'auth', grpcCode: 16, message: 'etcdserver: invalid auth token' });
    };
    const removed = await removeMember(h.deps, h.cluster, view, id(0));
    expect(removed).toMatchObject({ kind: 'block', reason: 'AUTH_FAILED' });
    expect(removed.kind !== 'removed' && removed.message).toMatch(
      /^Removing etcd-0 \(8e9e05c52164694d\) failed on credentials on every healthy member \(.*invalid auth token.*\); blocked, fix the etcd user\.$/,
    );
    expect(h.calls.memberRemove).toHaveLength(2);
  });

  it('still retries when only some members refuse them', async () => {
    h = harness();
    const view = viewOf(
      T0,
      [0, 1, 2].map((i) => ({ i, leader: 0 })),
    );
    let calls = 0;
    h.onMemberRemove = () => {
      throw calls++ === 0
        ? new EtcdCallError({ kind: 'auth', grpcCode: 16, message: 'etcdserver: invalid auth token' })
        : new EtcdCallError({ kind: 'other', grpcCode: 2, message: 'etcdserver: unhealthy cluster' });
    };
    expect(await removeMember(h.deps, h.cluster, view, id(0))).toMatchObject({ kind: 'retry', reason: 'ETCD_TRANSIENT' });
  });
});
