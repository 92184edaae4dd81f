// The cluster lock under remediate: a dead holder's lease lapses, a live holder's lease is renewed,
// a holder whose lease lapsed removes nothing, and the gates are judged again right before removal.
import { afterEach, describe, expect, it } from 'vitest';
import { takeClusterLock } from '../../../functions/app/cluster-lock.ts';
import { moveLeader } from '../../../functions/app/move-leader.ts';
import { probeMembers } from '../../../functions/app/probe-members.ts';
import { remediate } from '../../../functions/app/remediate.ts';
import { scheduleRetry } from '../../../functions/app/schedule-retry.ts';
import { systemClock } from '../../../functions/ports/clock.ts';
import { waitFor } from '../../../functions/shared/wait-for.ts';
import { id, sample, type MemberSpec } from '../core/fixtures.ts';
import { harness, unhealthy, type Harness } from './harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const LEASE = 30_000;
const three = (leader: number, override: Record<number, Partial<MemberSpec>> = {}): MemberSpec[] =>
  [0, 1, 2].map((i) => ({ i, leader, ...override[i] }));

/** Drives the incident from its last RetryRequested to the next remediate outcome. */
async function retryToRemediate() {
  await scheduleRetry(h.deps, h.lastOf('RetryRequested'));
  const due = h.scheduled.at(-1)!;
  h.clock.set(Math.max(h.clock.now(), due.at));
  await probeMembers(h.deps, { detailType: 'RetryDue', detail: due.event.detail as never });
  await moveLeader(h.deps, h.lastOf('MembersProbed'));
  return remediate(h.deps, h.lastOf('RemediationApproved'));
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
    h.onMemberRemove = () => h.setSample((at) => sample(at, [{ i: 0, leader: 0 }, { i: 2, leader: 0 }]));
    // A remediator that took the lock and died: it never renews and never releases.
    expect(await h.deps.store.acquireLock('c1', 'incident:dead:0000', LEASE, h.clock.now())).toBe(true);

    expect(await remediate(h.deps, await approve('etcd-1'))).toMatchObject({ kind: 'retry', reason: 'CLUSTER_LOCKED' });
    expect(h.calls.memberRemove).toEqual([]);
    expect(h.lastOf('RetryRequested').message).toMatch(/waits: another remediation holds the lock of cluster c1; nothing was removed/);

    h.clock.advance(LEASE - 2_000);
    expect(await retryToRemediate()).toMatchObject({ kind: 'retry', reason: 'CLUSTER_LOCKED' });
    h.clock.advance(2_000);
    expect(await retryToRemediate()).toBe('completed');
    expect(h.calls.memberRemove).toEqual([id(1)]);
  });

  it('a holder whose lease lapsed during a long snapshot and was taken removes nothing', async () => {
    h = harness({ lockLeaseMs: LEASE, snapshotBeforeRemove: true });
    h.setSample((at) => sample(at, three(0)));
    const approved = await approve('etcd-1');
    h.onSnapshot = () => {
      // The snapshot outlasts the lease; meanwhile another remediator finds the lock lapsed and takes it.
      h.clock.advance(LEASE + 1);
      void h.deps.store.acquireLock('c1', 'incident:other:0000', LEASE, h.clock.now());
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
    h.onSnapshot = () => h.setSample((at) => sample(at, three(0, { 2: { paths: 'timeout' } })));

    const outcome = await remediate(h.deps, approved);

    expect(outcome).toMatchObject({ kind: 'block', reason: 'QUORUM_AT_RISK' });
    expect(h.calls.memberRemove).toEqual([]);
    const steps = (await h.deps.store.journal(approved.incidentId)).map((e) => e.step);
    expect(steps).toContain('snapshot-taken');
  });

  it('renews its lease in the background while the step runs, and releases it at the end', async () => {
    h = harness();
    const deps = { ...h.deps, clock: systemClock };
    const lease = 150;
    const held = await takeClusterLock(deps, 'c1', 'inc-1', lease);
    expect(held).toBeDefined();
    // For four leases, nobody else gets the lock: each background renewal pushed the lease out.
    const until = Date.now() + 4 * lease;
    let tries = 0;
    await waitFor(
      async () => {
        tries++;
        expect(await h.deps.store.acquireLock('c1', 'someone-else', lease, Date.now())).toBe(false);
        return Date.now() >= until ? true : undefined;
      },
      { timeoutMs: 10 * lease, intervalMs: 20, what: 'four leases to pass' },
    );
    expect(tries).toBeGreaterThan(5);
    expect(await held!.stillHeld()).toBe(true);
    await held!.release();
    expect(await h.deps.store.acquireLock('c1', 'someone-else', lease, Date.now())).toBe(true);
  });
});
