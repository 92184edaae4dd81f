import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../support/probe-members.ts';
import { remediate } from '../../../functions/app/removal/remediate.ts';
import { scheduleRetry } from '../../../functions/app/incident/schedule-retry.ts';
import { asInvocation } from '../../../functions/lib/invocation.ts';
import { UnknownClusterError } from '../../../functions/ports/cluster-directory.ts';
import { EtcdCallError } from '../../../functions/ports/etcd.ts';
import { sampleLine } from '../../support/journal-lines.ts';
import { endpointOf, id, sample, type MemberSpec } from '../core/fixtures.ts';
import { harness, unhealthy, type Harness } from './harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const three = (leader: number, override: Record<number, Partial<MemberSpec>> = {}): MemberSpec[] => [0, 1, 2].map((i) => ({ i, leader, ...override[i] }));

/** Opens the incident for etcd-<i> and runs move-leader on the probe it publishes. */
async function openAndDecide(memberName: string) {
  const opened = await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy(memberName) });
  if (opened.kind !== 'probed') throw new Error(`expected a probe, got ${opened.kind}`);
  const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));
  return { incident: opened.incident, decision };
}

/** What the runtime does after a crash: move the incident to its next attempt and probe again. */
async function resumeAndProbe(incidentId: string) {
  const incident = (await h.deps.store.getIncident(incidentId))!;
  const attempt = incident.attempt + 1;
  await h.deps.store.updateIncident(incidentId, { attempt, waits: incident.waits + 1 }, { expectVersion: incident.version, now: h.clock.now() });
  const at = new Date(h.clock.now()).toISOString();
  await probeMembers(h.deps, { detailType: 'RetryDue', detail: { incidentId, clusterId: 'c1', attempt, at, reason: 'RUNTIME_RESUMED' } });
}

describe('duplicate deliveries', () => {
  it('a MembersProbed delivered twice is decided once: one move, one approval', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    h.onMoveLeader = (to) => h.setSample((at) => sample(at, three(to === id(1) ? 1 : 2)));
    const opened = await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-0') });
    expect(opened.kind).toBe('probed');
    const probed = h.lastOf('MembersProbed');

    const [first, second] = await Promise.all([moveLeader(h.deps, probed), moveLeader(h.deps, probed)]);

    expect([first?.kind, second?.kind].sort()).toEqual(['approve', undefined].sort());
    expect(h.calls.moveLeader).toHaveLength(1);
    expect(h.events.filter((e) => e.detailType === 'RemediationApproved')).toHaveLength(1);
  });

  it('a RemediationApproved delivered twice at once removes the member once', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    h.onMemberRemove = () =>
      h.setSample((at) =>
        sample(at, [
          { i: 0, leader: 0 },
          { i: 2, leader: 0 },
        ]),
      );
    await openAndDecide('etcd-1');
    const approved = h.lastOf('RemediationApproved');

    // Together, as an at-least-once bus may deliver them: the lock alone would let both in (same owner).
    const outcomes = await Promise.all([remediate(h.deps, approved), remediate(h.deps, approved)]);

    expect(outcomes.filter((o) => o === undefined)).toHaveLength(1);

    expect(h.calls.memberRemove).toEqual([id(1)]);
    expect(h.events.filter((e) => e.detailType === 'RemediationCompleted')).toHaveLength(1);
  });

  it('a step that throws releases its claim, so the same event can be tried again', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    let fail = true;
    h.onMemberRemove = () => {
      if (fail) throw new Error('the process fell over');
      h.setSample((at) =>
        sample(at, [
          { i: 0, leader: 0 },
          { i: 2, leader: 0 },
        ]),
      );
    };
    await openAndDecide('etcd-1');
    const approved = h.lastOf('RemediationApproved');

    await expect(remediate(h.deps, approved)).rejects.toThrow('the process fell over');
    fail = false;
    expect(await remediate(h.deps, approved)).toBe('completed');
    expect(h.calls.memberRemove).toEqual([id(1), id(1)]);
  });
});

describe('a step lease left by an invocation that died', () => {
  /** A remediate that dies right after MemberRemove: its lease stays, as a killed process leaves it. */
  async function diedAfterRemove(requestId: string) {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    h.onMemberRemove = () =>
      h.setSample((at) =>
        sample(at, [
          { i: 0, leader: 0 },
          { i: 2, leader: 0 },
        ]),
      );
    await openAndDecide('etcd-1');
    const approved = h.lastOf('RemediationApproved');
    const incidentId = approved.incidentId;
    // The first try took the lease and removed the member, then its process died: no release, no commit.
    const before = (await h.deps.store.getIncident(incidentId))!;
    await h.deps.store.updateIncident(
      incidentId,
      { inFlight: { key: `remediate@${before.attempt}`, until: h.clock.now() + 600_000, holder: requestId } },
      { expectVersion: before.version, now: h.clock.now() },
    );
    return { approved, incidentId };
  }

  it("is taken over by Lambda's retry of that invocation (the same request id): the remediation finishes now", async () => {
    const { approved, incidentId } = await diedAfterRemove('req-1');
    expect(await asInvocation('req-1', () => remediate(h.deps, approved))).toBe('completed');
    expect((await h.deps.store.getIncident(incidentId))?.state).toBe('awaiting-replacement');
  });

  it('is respected by any other invocation (a duplicate delivery), and by the local runtime, until it lapses', async () => {
    const { approved, incidentId } = await diedAfterRemove('req-1');
    expect(await asInvocation('req-2', () => remediate(h.deps, approved))).toBeUndefined();
    expect(await remediate(h.deps, approved)).toBeUndefined();
    expect((await h.deps.store.getIncident(incidentId))?.state).toBe('open');
  });
});

describe('probe-members', () => {
  it('fails an event for an unknown cluster without opening an incident that later reports would join', async () => {
    h = harness();
    await expect(probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-0', 'nope') })).rejects.toBeInstanceOf(UnknownClusterError);
    expect(await h.deps.store.listIncidents()).toEqual([]);
  });
});

describe('move-leader', () => {
  it('retries, not blocks, when no member list answered the first probe', async () => {
    h = harness();
    const { incident, decision } = await openAndDecide('etcd-0');
    expect(decision).toMatchObject({ kind: 'retry', reason: 'CLUSTER_UNREACHABLE' });
    expect(h.lastOf('RetryRequested').message).toMatch(/No member of the cluster answered, so memberName etcd-0 cannot be judged; we look again at /);
    expect((await h.deps.store.getIncident(incident.incidentId))!.state).toBe('open');
  });

  it('never hands leadership to a member that another open incident is remediating', async () => {
    h = harness();
    // etcd-1 is the most caught-up candidate, but it is itself being remediated.
    h.setSample((at) => sample(at, three(0, { 1: { applied: 500 } })));
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    h.onMoveLeader = (to) => h.setSample((at) => sample(at, three(to === id(1) ? 1 : 2, { 1: { applied: 500 } })));
    const { decision } = await openAndDecide('etcd-0');
    expect(h.calls.moveLeader).toEqual([{ endpoint: endpointOf(0), to: id(2) }]);
    expect(decision).toMatchObject({ kind: 'approve', reason: 'LEADER_MOVED' });
  });

  it('resumes remediation when the member left the list after remediate began (a crash before its marker)', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    const { incident } = await openAndDecide('etcd-1');
    await h.deps.store.markStep(incident.incidentId, { at: h.clock.now(), ...sampleLine('lock-taken') });
    h.setSample((at) =>
      sample(at, [
        { i: 0, leader: 0 },
        { i: 2, leader: 0 },
      ]),
    );
    await resumeAndProbe(incident.incidentId);
    const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));
    expect(decision).toMatchObject({ kind: 'approve', reason: 'TARGET_IS_FOLLOWER' });
    expect(decision!.message).toMatch(/^etcd-1 \(91bc3c398fb3c146\) is already out of the member list; remediation resumes/);
    expect(h.events.filter((e) => e.detailType === 'RemediationBlocked')).toEqual([]);
  });

  it('a resume after an election retry keeps the label of the approval, not of the retry', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    const { incident } = await openAndDecide('etcd-1');
    // remediate removed the follower, then found no leader yet and asked for a retry.
    await h.deps.store.markStep(incident.incidentId, { at: h.clock.now(), ...sampleLine('member-removed') });
    const current = (await h.deps.store.getIncident(incident.incidentId))!;
    await h.deps.store.updateIncident(
      incident.incidentId,
      { lastDecision: { kind: 'retry', at: h.clock.now(), reprobeNow: false, reason: 'ELECTION_IN_PROGRESS', message: 'no leader yet', evidence: {} } },
      { expectVersion: current.version, now: h.clock.now() },
    );
    h.setSample((at) =>
      sample(at, [
        { i: 0, leader: 0 },
        { i: 2, leader: 0 },
      ]),
    );
    await resumeAndProbe(incident.incidentId);
    const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));
    expect(decision).toMatchObject({ kind: 'approve', reason: 'TARGET_IS_FOLLOWER', leaderMove: 'not-needed' });
  });

  it('ends a resumed remediation that outlives the incident deadline instead of looping', async () => {
    h = harness({ incidentDeadlineMs: 60_000 });
    h.setSample((at) => sample(at, three(0)));
    const { incident } = await openAndDecide('etcd-1');
    await h.deps.store.markStep(incident.incidentId, { at: h.clock.now(), ...sampleLine('member-removed') });
    h.clock.advance(61_000);
    await resumeAndProbe(incident.incidentId);
    const decision = await moveLeader(h.deps, h.lastOf('MembersProbed'));
    expect(decision).toMatchObject({ kind: 'block', reason: 'INCIDENT_DEADLINE_EXCEEDED' });
    expect(decision!.message).toMatch(
      /^etcd-1 \(91bc3c398fb3c146\) is out of the member list, but remediation has not finished within the incident deadline of 60 s \(last: .*\); blocked, check that the remaining members have a leader/,
    );
  });
});

describe('remediate', () => {
  it('removes nothing when the cluster was switched to dry run after the approval', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    await openAndDecide('etcd-1');
    h.cluster.policy = { ...h.cluster.policy, dryRun: true };
    const outcome = await remediate(h.deps, h.lastOf('RemediationApproved'));
    expect(outcome).toMatchObject({ kind: 'block', reason: 'DRY_RUN' });
    expect(h.calls.memberRemove).toEqual([]);
  });

  it('says when a failed removal is tried again', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    await openAndDecide('etcd-1');
    h.onMemberRemove = () => {
      throw new EtcdCallError({ kind: 'other', grpcCode: 14, message: 'etcdserver: request timed out' });
    };
    const outcome = await remediate(h.deps, h.lastOf('RemediationApproved'));
    expect(outcome).toMatchObject({ kind: 'retry', reason: 'ETCD_TRANSIENT' });
    // etcd's own "request timed out" holds for the whole cluster: one member asked, not each.
    expect(h.calls.memberRemove).toEqual([id(1)]);
    expect(h.lastOf('RetryRequested').message).toMatch(
      /^etcd refused removing etcd-1 \(91bc3c398fb3c146\) through .* direct \S+: etcdserver: request timed out; we try again at 2025-.*Z\.$/,
    );
  });
});

/** Makes `method` of `target` fail the next time it is called with arguments `when` accepts. */
function failOnce<T extends object, K extends keyof T>(target: T, method: K, when: (...args: unknown[]) => boolean = () => true): void {
  const original = target[method] as (...args: unknown[]) => Promise<unknown>;
  let armed = true;
  target[method] = (async (...args: unknown[]) => {
    if (armed && when(...args)) {
      armed = false;
      throw new Error(`injected: ${String(method)} failed`);
    }
    return original.apply(target, args);
  }) as T[K];
}

describe('a step whose publish, schedule or write failed is done by the redelivery, and nothing twice', () => {
  it('schedule-retry: the scheduler failing after the attempt was advanced still gets its timer on redelivery', async () => {
    h = harness();
    const { decision } = await openAndDecide('etcd-0');
    expect(decision).toMatchObject({ kind: 'retry' });
    const requested = h.lastOf('RetryRequested');
    failOnce(h.deps.scheduler, 'schedule');

    await expect(scheduleRetry(h.deps, requested)).rejects.toThrow('injected');
    await scheduleRetry(h.deps, requested);

    expect(h.scheduled.map((r) => r.name)).toEqual([expect.stringMatching(/-retry-1$/)]);
    expect((await h.deps.store.getIncident(requested.incidentId))!.attempt).toBe(1);
  });

  it('probe-members: a MemberUnhealthy redelivered after its publish failed publishes MembersProbed', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    failOnce(h.deps.bus, 'publish');

    await expect(probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') })).rejects.toThrow('injected');
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });

    expect(h.events.map((e) => e.detailType)).toEqual(['MembersProbed']);
  });

  it('remediate: the completion redelivered after its publish failed is published, and the member removed once', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    h.onMemberRemove = () =>
      h.setSample((at) =>
        sample(at, [
          { i: 0, leader: 0 },
          { i: 2, leader: 0 },
        ]),
      );
    await openAndDecide('etcd-1');
    const approved = h.lastOf('RemediationApproved');
    failOnce(h.deps.bus, 'publish', (event) => (event as { detailType: string }).detailType === 'RemediationCompleted');

    await expect(remediate(h.deps, approved)).rejects.toThrow('injected');
    await remediate(h.deps, approved);

    expect(h.events.filter((e) => e.detailType === 'RemediationCompleted')).toHaveLength(1);
    expect(h.calls.memberRemove).toEqual([id(1)]);
    expect((await h.deps.store.getIncident(approved.incidentId))!.state).toBe('awaiting-replacement');
  });

  it('move-leader: a decision whose write failed after the move publishes LeaderMoved and the approval once each', async () => {
    h = harness();
    h.setSample((at) => sample(at, three(0)));
    let moves = 0;
    // As etcd does: once leadership moved, the old leader answers "not leader".
    h.onMoveLeader = (to) => {
      if (moves++ > 0) throw new EtcdCallError({ kind: 'other', grpcCode: 2, message: 'etcdserver: not leader' });
      h.setSample((at) => sample(at, three(to === id(1) ? 1 : 2)));
    };
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-0') });
    const probed = h.lastOf('MembersProbed');
    failOnce(h.deps.store, 'updateIncident', (_id, patch) => 'lastDecision' in (patch as object));

    await expect(moveLeader(h.deps, probed)).rejects.toThrow('injected');
    await moveLeader(h.deps, probed);

    const types = h.events.map((e) => e.detailType);
    expect(types.filter((t) => t === 'LeaderMoved')).toHaveLength(1);
    expect(types.filter((t) => t === 'RemediationApproved')).toHaveLength(1);
    expect(moves).toBe(1);
    expect(h.lastOf('RemediationApproved')).toMatchObject({ leaderMove: 'moved' });
  });
});
