// The cluster lock under remediate: a dead holder's lease lapses, a live holder's lease is renewed,
// a holder whose lease lapsed removes nothing, and the gates are judged again right before removal.
import { afterEach, describe, expect, it } from 'vitest';
import { takeClusterLock } from '../../../../functions/app/fleet/cluster-lock.ts';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { remediate } from '../../../../functions/app/removal/remediate.ts';
import type { ClusterGuard } from '../../../../functions/ports/cluster-guard.ts';
import { waitFor } from '../../../../functions/lib/wait-for.ts';
import { id, sample, type MemberSpec } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness, retryToRemediate } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const LEASE = 30_000;
const three = (leader: number, override: Record<number, Partial<MemberSpec>> = {}): MemberSpec[] => [0, 1, 2].map((i) => ({ i, leader, ...override[i] }));

/** The harness's guard in etcd with some calls answered as a test wants them. */
function useGuard(over: Partial<ClusterGuard>): ClusterGuard {
  Object.assign(h.guard, over);
  return h.guard;
}

async function approve(memberName: string) {
  await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy(memberName) });
  await moveLeader(h.deps, h.lastOf('MembersProbed'));
  return h.lastOf('RemediationApproved');
}

describe('the cluster lock under remediate', () => {
  it('waits on a lock whose holder died, and takes it once the lease has lapsed', async () => {
    h = harness({ lockLeaseMs: LEASE, backoff: { baseMs: 1_000, capMs: 1_000 } });
    h.setSample((at) => sample(at, three(0)));
    h.onMemberRemove = () =>
      h.setSample((at) =>
        sample(at, [
          { i: 0, leader: 0 },
          { i: 2, leader: 0 },
        ]),
      );
    // A remediator that took the lock and died: it never renews and never releases.
    expect(await h.guard.acquire('incident:dead:0000', LEASE)).toEqual({ held: true });

    expect(await remediate(h.deps, await approve('etcd-1'))).toMatchObject({ kind: 'retry', reason: 'CLUSTER_LOCKED' });
    expect(h.calls.memberRemove).toEqual([]);
    expect(h.lastOf('RetryRequested').message).toMatch(
      /waits: in cluster c1, another remediation holds the lock \(etcd key \/etcd-remediator\/lock: incident:dead:0000, for 0 ms since .*\); nothing was removed/,
    );

    h.clock.advance(LEASE - 2_000);
    expect(await retryToRemediate(h)).toMatchObject({ kind: 'retry', reason: 'CLUSTER_LOCKED' });
    h.clock.advance(2_000);
    expect(await retryToRemediate(h)).toBe('completed');
    expect(h.calls.memberRemove).toEqual([id(1)]);
  });

  it('a holder whose lease lapsed during a long snapshot and was taken removes nothing', async () => {
    h = harness({ lockLeaseMs: LEASE, snapshotBeforeRemove: true });
    h.setSample((at) => sample(at, three(0)));
    const approved = await approve('etcd-1');
    h.onSnapshot = () => {
      // The snapshot outlasts the lease; meanwhile another remediator finds the lock lapsed and takes it.
      h.clock.advance(LEASE + 1);
      void h.guard.acquire('incident:other:0000', LEASE);
    };

    const outcome = await remediate(h.deps, approved);

    expect(outcome).toMatchObject({ kind: 'retry', reason: 'CLUSTER_LOCKED' });
    expect(h.lastOf('RetryRequested').message).toMatch(/our hold on the lock lapsed and another remediation took it/);
    expect(h.calls.memberRemove).toEqual([]);
  });

  it('judges the gates again after the snapshot: a member lost meanwhile blocks the removal', async () => {
    h = harness({ snapshotBeforeRemove: true });
    h.setSample((at) => sample(at, three(0)));
    const approved = await approve('etcd-1');
    // While the snapshot streams, etcd-2 stops answering: removing etcd-1 now would leave one of three.
    h.onSnapshot = () => h.setSample((at) => sample(at, three(0, { 2: { paths: 'refused' } })));

    const outcome = await remediate(h.deps, approved);

    expect(outcome).toMatchObject({ kind: 'block', reason: 'QUORUM_AT_RISK' });
    expect(h.calls.memberRemove).toEqual([]);
    const steps = (await h.deps.store.journal(approved.incidentId)).map((e) => e.step);
    expect(steps).toContain('snapshot-taken');
  });

  it('a member that only times out meanwhile holds the removal too, and is looked at again with a longer probe', async () => {
    h = harness({ snapshotBeforeRemove: true });
    h.setSample((at) => sample(at, three(0)));
    const approved = await approve('etcd-1');
    h.onSnapshot = () => h.setSample((at) => sample(at, three(0, { 2: { paths: 'timeout' } })));

    const outcome = await remediate(h.deps, approved);

    expect(outcome).toMatchObject({ kind: 'retry', reason: 'QUORUM_AT_RISK' });
    expect(h.calls.memberRemove).toEqual([]);
  });

  it('renews its lease in the background while the step runs, and releases it at the end', async () => {
    h = harness();
    const lease = 300;
    // Renewals counted as etcd sees them; the clock moves only when the test says.
    let renewals = 0;
    const renew = h.guard.renew.bind(h.guard);
    useGuard({ renew: (owner, leaseMs) => (renewals++, renew(owner, leaseMs)) });
    const attempt = await takeClusterLock(h.deps, { ...h.cluster, policy: { ...h.cluster.policy, lockLeaseMs: lease } }, 'inc-1', undefined, undefined);
    if (!attempt.held) throw new Error(JSON.stringify(attempt));
    const held = attempt.lock;
    expect(held.where).toBe('etcd key /etcd-remediator/lock');
    // Ten leases pass, each step shorter than one; after each, a background renewal lands first.
    for (let step = 0; step < 15; step++) {
      const before = renewals;
      h.clock.advance((2 * lease) / 3);
      await waitFor(async () => (renewals > before ? true : undefined), { timeoutMs: 10_000, intervalMs: 10, what: 'a background renewal' });
      expect(await h.guard.acquire('someone-else', lease)).toMatchObject({ held: false });
    }
    expect(await held.stillHeld()).toBe(true);
    await held.release();
    expect(await h.guard.acquire('someone-else', lease)).toEqual({ held: true });
  });

  it('a removal recorded in etcd by another remediator and not yet replaced blocks this one, before any move', async () => {
    h = harness();
    // etcd-3 was removed from a 4-member cluster by someone else; 3 are left.
    h.setSample((at) => sample(at, three(0)));
    const record = {
      memberId: 'a8266ecf031671f3',
      memberName: 'etcd-3',
      incidentId: 'elsewhere',
      targetKey: 'memberName=etcd-3',
      at: h.clock.now() - 5_000,
      sizeBefore: 4,
      by: 'incident:elsewhere:0001',
      confirmed: true,
    };
    const recorded: unknown[] = [];
    useGuard({ removals: async () => [record], saveRemovals: async (r) => void recorded.push(r) });

    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-0') });
    const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));

    expect(decision).toMatchObject({ kind: 'block', reason: 'REPLACEMENT_PENDING' });
    // etcd-0 leads and answers: without the record it would have moved leadership first.
    expect(h.calls.moveLeader).toEqual([]);
    expect(h.calls.memberRemove).toEqual([]);
    expect(recorded).toEqual([]);
  });

  it("KCP's retry limits count a remediation of the same target another state file made, from the record in etcd", async () => {
    h = harness({ maxRetry: 0 });
    h.setSample((at) => sample(at, three(0)));
    // Another remediator removed etcd-1 ten minutes ago and its replacement (named the same) joined.
    const record = {
      memberId: 'ffff',
      memberName: 'etcd-1',
      incidentId: 'elsewhere',
      targetKey: 'memberName=etcd-1',
      at: h.clock.now() - 600_000,
      sizeBefore: 3,
      by: 'incident:elsewhere:0001',
      confirmed: true,
    };
    useGuard({ removals: async () => [record] });

    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));

    expect(decision).toMatchObject({ kind: 'block', reason: 'MAX_RETRY_EXCEEDED' });
    expect(h.calls.memberRemove).toEqual([]);
  });
});
