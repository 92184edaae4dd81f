// No removal without the lock and the removal record in etcd. When etcd does not answer for
// them the step waits; when it refuses them for good it blocks and says what to do; it never
// falls back to a lock only this state sees. Only a cluster the policy names single-remediator
// keeps both in the state store, and every message of its incidents says so.
import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { remediate } from '../../../../functions/app/removal/remediate.ts';
import { scheduleRetry } from '../../../../functions/app/incident/schedule-retry.ts';
import { journalWords } from '../../../../functions/core/incident/journal-words.ts';
import { singleRemediatorNote } from '../../../../functions/core/policy/policy.ts';
import type { EtcdFailure } from '../../../../functions/core/common/types.ts';
import { id, sample, type MemberSpec } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const three = (leader: number, override: Record<number, Partial<MemberSpec>> = {}): MemberSpec[] => [0, 1, 2].map((i) => ({ i, leader, ...override[i] }));
const timeout: EtcdFailure = { kind: 'timeout', grpcCode: 4, message: 'Deadline exceeded after 2.000s' };
const noSpace: EtcdFailure = { kind: 'other', grpcCode: 8, message: 'etcdserver: mvcc: database space exceeded' };
const denied: EtcdFailure = { kind: 'auth', grpcCode: 7, message: 'etcdserver: permission denied' };
const leaderChanged: EtcdFailure = { kind: 'other', grpcCode: 14, message: 'etcdserver: leader changed' };

/** Reports etcd-<i>, decides, and runs remediate on an approval; the last outcome. */
async function report(memberName: string) {
  await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy(memberName) });
  const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));
  if (decision?.kind !== 'approve') return decision;
  return remediate(h.deps, h.lastOf('RemediationApproved'));
}

/** From the last RetryRequested to the next outcome, with the clock at the retry's time. */
async function retry() {
  await scheduleRetry(h.deps, h.lastOf('RetryRequested'));
  const due = h.scheduled.at(-1)!;
  h.clock.set(Math.max(h.clock.now(), due.at));
  await probeMembers(h.deps, { detailType: 'RetryDue', detail: due.event.detail as never });
  const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));
  if (decision?.kind !== 'approve') return decision;
  return remediate(h.deps, h.lastOf('RemediationApproved'));
}

const journalOf = async (incidentId: string) => (await h.deps.store.journal(incidentId)).map((e) => `${e.step} ${journalWords(e)}`);

describe('the lock when etcd does not take it', () => {
  it('a timeout taking the lock is a retry that spends an attempt: nothing is removed until etcd answers, and no state-store lock stands in', async () => {
    h = harness({ backoff: { baseMs: 1_000, capMs: 1_000 } });
    h.setSample((at) => sample(at, three(0)));
    h.onMemberRemove = () =>
      h.setSample((at) =>
        sample(at, [
          { i: 0, leader: 0 },
          { i: 2, leader: 0 },
        ]),
      );
    h.guard.failing.acquire = timeout;

    expect(await report('etcd-1')).toMatchObject({ kind: 'retry', reason: 'LOCK_UNAVAILABLE' });
    expect(h.calls.memberRemove).toEqual([]);
    const said = h.lastOf('RetryRequested').message;
    expect(said).toMatch(
      /^etcd-1 \(91bc3c398fb3c146\) waits: we could not take the cluster lock \(etcd key \/etcd-remediator\/lock: no answer in time, Deadline exceeded after 2.000s\); no member is removed without the cluster lock and the removal record in etcd, so nothing was removed; we try again at /,
    );
    // The store's lock was never taken: another state file would have seen nothing.
    expect(await h.deps.store.acquireLock('c1', 'another-state', 1_000, h.clock.now())).toBe(true);

    delete h.guard.failing.acquire;
    expect(await retry()).toBe('completed');
    expect(h.calls.memberRemove).toEqual([id(1)]);
    expect(h.guard.records).toMatchObject([{ memberId: id(1), sizeBefore: 3, confirmed: true }]);
    const incident = (await h.deps.store.listIncidents())[0]!;
    expect(incident.attempt - incident.waits).toBe(1);
  });

  it.each([
    ['the record cannot be read', 'removals' as const, 'read the removal record'],
    ['the record cannot be written', 'saveRemovals' as const, 'write the removal record'],
    ['the lock cannot be renewed right before the removal', 'renew' as const, 'take the cluster lock'],
  ])('under the lock, %s: a retry, nothing removed', async (_, call, action) => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    await moveLeader(h.deps, h.lastOf('MembersProbed'));
    h.guard.failing[call] = timeout;

    expect(await remediate(h.deps, h.lastOf('RemediationApproved'))).toMatchObject({ kind: 'retry', reason: 'LOCK_UNAVAILABLE' });
    expect(h.calls.memberRemove).toEqual([]);
    expect(h.lastOf('RetryRequested').message).toContain(`we could not ${action} (etcd key /etcd-remediator/lock`);
    // The lock taken for this run was let go.
    expect(h.guard.heldBy()).toBeUndefined();
  });

  it('a NOSPACE alarm etcd answers with, maintenance.clearNoSpace off: blocked ETCD_NO_SPACE, saying how to free space and disarm, nothing removed', async () => {
    h = harness({ maintenance: { clearNoSpace: false } });
    h.setSample((at) => sample(at, three(0)));
    h.guard.failing.acquire = noSpace;

    expect(await report('etcd-1')).toMatchObject({ kind: 'block', reason: 'ETCD_NO_SPACE' });
    expect(h.calls.memberRemove).toEqual([]);
    expect(h.lastOf('RemediationBlocked').message).toBe(
      'etcd-1 (91bc3c398fb3c146) is not removed: a NOSPACE alarm (raised by a member) stands, and etcd refuses every write while it does ("etcdserver: mvcc: database space exceeded"), ' +
        'so we could not take the cluster lock (etcd key /etcd-remediator/lock); no member is removed without the cluster lock and the removal record in etcd, so nothing was removed; blocked: ' +
        'free space (etcdctl compact, then etcdctl defrag on each member, one at a time and the leader last, as a defragmentation stalls the member it runs on; or a larger --quota-backend-bytes), then run `etcdctl alarm disarm`, and report etcd-1 (91bc3c398fb3c146) again.',
    );
  });

  it('a NOSPACE alarm etcd answers with, by default: the removal waits (no attempt spent) and asks maintenance to clear it, nothing removed', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    h.guard.failing.acquire = noSpace;

    expect(await report('etcd-1')).toMatchObject({ kind: 'retry', reason: 'NOSPACE_CLEARING' });
    expect(h.calls.memberRemove).toEqual([]);
    expect(h.lastOf('RetryRequested').message).toMatch(
      /waits: a NOSPACE alarm \(raised by a member\) stands.*maintenance clears the alarm, and we look again at/,
    );
    const asked = h.events.filter((e) => e.detailType === 'MaintenanceDue');
    expect(asked.map((e) => e.detail)).toEqual([expect.objectContaining({ clusterId: 'c1', askedBy: expect.stringMatching(/^incident:/) })]);
  });

  it('a NOSPACE alarm the probe sees holds the removal before any leader is moved: a wait for maintenance by default, a block with it off', async () => {
    // Five members, so the quorum gate passes with etcd-4 alarmed.
    const five = (at: number) =>
      sample(
        at,
        [0, 1, 2, 3, 4].map((i) => ({ i, leader: 0, db: [2 << 20, 1 << 20] as const, ...(i === 4 ? { alarms: ['NOSPACE'] } : {}) })),
      );
    h = harness();
    h.setSample(five);
    // etcd-0 leads and answers: without the check it would move leadership first.
    expect(await report('etcd-0')).toMatchObject({ kind: 'retry', reason: 'NOSPACE_CLEARING', evidence: { decidedBy: 'etcd-writable', alarmed: ['etcd-4'] } });
    expect(h.calls.moveLeader).toEqual([]);
    expect(h.lastOf('RetryRequested').message).toMatch(/a NOSPACE alarm \(raised by etcd-4\) stands.*maintenance clears it: /);
    expect(h.events.some((e) => e.detailType === 'MaintenanceDue')).toBe(true);
    await h.close();

    h = harness({ maintenance: { clearNoSpace: false } });
    h.setSample(five);
    expect(await report('etcd-0')).toMatchObject({ kind: 'block', reason: 'ETCD_NO_SPACE', evidence: { decidedBy: 'etcd-writable', alarmed: ['etcd-4'] } });
    expect(h.calls.moveLeader).toEqual([]);
    expect(h.lastOf('RemediationBlocked').message).toMatch(/a NOSPACE alarm \(raised by etcd-4\) stands.*maintenance\.clearNoSpace false/);
  });

  it('credentials etcd refuses for the lock: blocked AUTH_FAILED, naming what to fix', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    h.guard.failing.acquire = denied;

    expect(await report('etcd-1')).toMatchObject({ kind: 'block', reason: 'AUTH_FAILED' });
    expect(h.calls.memberRemove).toEqual([]);
    expect(h.lastOf('RemediationBlocked').message).toMatch(
      /etcd refused us as no user when we tried to take the cluster lock \(etcd key \/etcd-remediator\/lock: etcdserver: permission denied\); .*blocked, fix the etcd user and password/,
    );
  });

  it('an etcd access that can hold no lock: blocked NO_SHARED_LOCK before any move', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    const etcdFor = h.deps.etcdFor;
    h.deps.etcdFor = (cluster) => {
      const { guard: _none, ...rest } = etcdFor(cluster);
      return rest;
    };

    expect(await report('etcd-0')).toMatchObject({ kind: 'block', reason: 'NO_SHARED_LOCK' });
    expect(h.calls.moveLeader).toEqual([]);
    expect(h.lastOf('RemediationBlocked').message).toMatch(/set policy singleRemediator/);
  });
});

describe('a failed read of the removal record is a retry, not an answer', () => {
  it('during the election another removal caused: not TARGET_NOT_FOUND, but a retry, then DUPLICATE_INCIDENT once the record reads', async () => {
    h = harness({ backoff: { baseMs: 1_000, capMs: 1_000 } });
    // etcd-1 is gone from the list: another remediator removed it a moment ago, and etcd elects.
    h.setSample((at) =>
      sample(at, [
        { i: 0, leader: 0 },
        { i: 2, leader: 0 },
      ]),
    );
    h.guard.records = [
      {
        memberId: id(1),
        memberName: 'etcd-1',
        incidentId: 'elsewhere',
        targetKey: 'memberName=etcd-1',
        at: h.clock.now() - 1_000,
        sizeBefore: 3,
        by: 'incident:elsewhere:0001',
      },
    ];
    h.guard.failing.removals = leaderChanged;

    expect(await report('etcd-1')).toMatchObject({ kind: 'retry', reason: 'LOCK_UNAVAILABLE' });
    expect(h.lastOf('RetryRequested').message).toMatch(/we could not read the removal record .*etcdserver: leader changed/);

    delete h.guard.failing.removals;
    expect(await retry()).toMatchObject({ kind: 'close', reason: 'DUPLICATE_INCIDENT' });
  });

  it('a resolved member gone from the list while the record cannot be read: a retry, not TARGET_NOT_FOUND; then, read, the remover is named', async () => {
    h = harness({ backoff: { baseMs: 1_000, capMs: 1_000 } });
    h.setSample((at) => sample(at, three(0)));
    // Approved, but the lock does not answer: the incident holds etcd-1's id and waits.
    h.guard.failing.acquire = timeout;
    expect(await report('etcd-1')).toMatchObject({ kind: 'retry', reason: 'LOCK_UNAVAILABLE' });
    delete h.guard.failing.acquire;

    // Meanwhile another remediator (of another state) removed it, and etcd elects.
    h.setSample((at) =>
      sample(at, [
        { i: 0, leader: 0 },
        { i: 2, leader: 0 },
      ]),
    );
    h.guard.records = [
      {
        memberId: id(1),
        memberName: 'etcd-1',
        incidentId: 'elsewhere',
        targetKey: 'memberName=etcd-1',
        at: h.clock.now() - 1_000,
        sizeBefore: 3,
        by: 'incident:elsewhere:0001',
      },
    ];
    h.guard.failing.removals = leaderChanged;
    expect(await retry()).toMatchObject({ kind: 'retry', reason: 'LOCK_UNAVAILABLE', evidence: { decidedBy: 'removal-record' } });

    delete h.guard.failing.removals;
    const closed = await retry();
    expect(closed).toMatchObject({ kind: 'close', reason: 'DUPLICATE_INCIDENT', evidence: { incidentId: 'elsewhere', removedBy: 'incident:elsewhere:0001' } });
    // Not of this state: nothing here says that one replaces its machine.
    expect(h.lastOf('RemediationClosed').message).toMatch(/a remediator this state does not hold/);
    expect(h.calls.memberRemove).toEqual([]);
  });

  it('before a move: no leader is moved on a record that could not be read', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    h.guard.failing.removals = timeout;

    expect(await report('etcd-0')).toMatchObject({ kind: 'retry', reason: 'LOCK_UNAVAILABLE', evidence: { decidedBy: 'removal-record' } });
    expect(h.calls.moveLeader).toEqual([]);
  });

  it('a block stands on its own when the record cannot be read (no quorum: nothing to wait for)', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0, { 1: { paths: 'timeout' }, 2: { paths: 'timeout' } })));
    h.guard.failing.removals = timeout;

    expect(await report('etcd-1')).toMatchObject({ kind: 'block' });
  });
});

describe('a single-remediator cluster', () => {
  it('keeps the lock and the record in the state store, one member down at a time, and every message says so', async () => {
    h = harness({ singleRemediator: true });
    h.setSample((at) => sample(at, three(0)));
    h.onMemberRemove = () =>
      h.setSample((at) =>
        sample(at, [
          { i: 0, leader: 0 },
          { i: 2, leader: 0 },
        ]),
      );
    // etcd would refuse: it is never asked.
    h.guard.failing = { acquire: noSpace, removals: noSpace, saveRemovals: noSpace, renew: noSpace, release: noSpace };

    expect(await report('etcd-1')).toBe('completed');
    expect(h.calls.memberRemove).toEqual([id(1)]);
    expect(h.guard.calls).toEqual([]);
    expect(await h.deps.store.removalRecords('c1')).toMatchObject([{ memberId: id(1), sizeBefore: 3, confirmed: true }]);
    const first = (await h.deps.store.listIncidents())[0]!;
    const lockTaken = (await journalOf(first.incidentId)).find((l) => l.startsWith('lock-taken'));
    expect(lockTaken).toMatch(/in the state store only \(cluster c1 is a single-remediator cluster by policy/);

    // The next removal waits for the replacement, from the record this state keeps.
    expect(await report('etcd-2')).toMatchObject({ kind: 'block', reason: 'REPLACEMENT_PENDING' });
    const note = singleRemediatorNote('c1');
    const said = h.events.flatMap((e) => ('message' in e.detail && typeof e.detail.message === 'string' ? [e.detail.message] : []));
    expect(said.length).toBeGreaterThanOrEqual(2);
    for (const message of said) expect(message.endsWith(note), message).toBe(true);
    // The blocked incident's result, which status shows, says it too.
    const blocked = (await h.deps.store.listIncidents({ state: 'blocked' }))[0]!;
    expect((blocked.result as { message: string }).message.endsWith(note)).toBe(true);
    expect(blocked.lastDecision?.message.endsWith(note)).toBe(true);
    const decisions = (await journalOf(first.incidentId)).filter((l) => /^(move-leader|remediate):/.test(l));
    for (const line of decisions) expect(line.endsWith(note), line).toBe(true);
  });
});
