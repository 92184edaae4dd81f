// The foundation's lab scenarios again, this time through the four handlers and the runtime.
import { describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { labPerTest, reasonsOf, startPipeline } from './pipeline.ts';
import { startedAhead } from './started-ahead.ts';

describe.sequential('lab scenarios end to end', () => {
  const t = labPerTest();
  // Most tests remove a member, each from a 3-member lab started during the tests before it
  // (started-ahead.ts); two ahead, as the dry run is too short for the next lab to age behind it.
  const labs = startedAhead(
    6,
    () => startLab({ members: 3 }),
    (lab) => lab.down(),
    { ahead: 2 },
  );

  const otherIds = (l: Lab, id: string) =>
    l.members
      .filter((m) => m.id !== id)
      .map((m) => m.id)
      .sort();
  const memberIds = async (l: Lab) => (await l.memberList()).map((m) => m.id).sort();

  it('a follower target is removed with no move', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const pipeline = (t.pipeline = await startPipeline(lab));

    const outcome = await pipeline.remediate(follower.name);

    expect(outcome.detailType).toBe('RemediationCompleted');
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.leaderMove).toBe('not-needed');
    expect(reasonsOf(pipeline.events, 'RemediationApproved')).toContain('TARGET_IS_FOLLOWER');
    expect(pipeline.calls.moveLeader).toEqual([]);
    expect(await memberIds(lab)).toEqual(otherIds(lab, follower.id));
  });

  it('a dry run says what it would do and touches nothing', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { dryRun: true } }));

    const outcome = await pipeline.remediate(leader.name);

    expect(outcome.detailType).toBe('RemediationBlocked');
    expect(outcome.detail).toMatchObject({ reason: 'DRY_RUN', evidence: { wouldDo: 'move-leader' } });
    expect((outcome.detail as { message: string }).message).toContain(leader.name);
    expect(pipeline.calls.moveLeader).toEqual([]);
    expect(pipeline.calls.memberRemove).toEqual([]);
    expect((await lab.leader()).id).toBe(leader.id);
    expect((await lab.memberList()).length).toBe(3);
  });

  it('an actuator that fails ends the incident as failed, with the member already out of etcd', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const broken = { name: 'broken', replace: () => Promise.reject(new Error('cloud API said no')) };
    const pipeline = (t.pipeline = await startPipeline(lab, { actuator: broken }));

    const outcome = await pipeline.remediate(follower.name);

    expect(outcome.detailType).toBe('RemediationFailed');
    const { reason, message } = outcome.detail as { reason: string; message: string };
    expect(reason).toBe('ACTUATOR_FAILED');
    expect(message).toContain(follower.name);
    expect(message).toContain('cloud API said no');
    expect(message).toContain('replace the machine by hand');
    expect(await memberIds(lab)).toEqual(otherIds(lab, follower.id));
    const [incident] = await pipeline.runtime.store.listIncidents();
    expect(incident!.state).toBe('failed');
  });

  it('a reachable leader hands leadership to the best candidate first, then is removed', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    const pipeline = (t.pipeline = await startPipeline(lab));

    const outcome = await pipeline.remediate(leader.name);

    expect(outcome.detailType).toBe('RemediationCompleted');
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.leaderMove).toBe('moved');
    const moved = pipeline.events.find((e) => e.detailType === 'LeaderMoved');
    expect(moved?.detail).toMatchObject({ from: leader.id, path: 'direct' });
    const to = (moved!.detail as { to: string }).to;
    expect(pipeline.calls.moveLeader).toEqual([to]);
    expect(outcome.detail.newLeader.id).not.toBe(leader.id);
    expect(await memberIds(lab)).toEqual(otherIds(lab, leader.id));
    const standing = await lab.waitForLeader({ excluding: [leader.name], timeoutMs: 10_000 });
    expect(standing.id).not.toBe(leader.id);
  });

  it('blocks with QUORUM_AT_RISK when the cut leader is the target and another follower is down', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    const down = lab.members.find((m) => m.id !== leader.id)!;
    await lab.kill(down.name);
    await lab.fault(leader.name, 'cut');
    const pipeline = (t.pipeline = await startPipeline(lab));

    const outcome = await pipeline.remediate(leader.name);

    expect(outcome.detailType).toBe('RemediationBlocked');
    const { reason, message } = outcome.detail as { reason: string; message: string };
    expect(reason).toBe('QUORUM_AT_RISK');
    expect(message).toContain(leader.name);
    expect(message).toContain(down.name);
    expect(pipeline.calls.memberRemove).toEqual([]);
    expect((await lab.memberList()).length).toBe(3);
  });

  it('a frozen leader is judged by the election that follows, never removed as an unreachable leader', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    lab.stop(leader.name);
    try {
      const pipeline = (t.pipeline = await startPipeline(lab));
      const outcome = await pipeline.remediate(leader.name);

      expect(outcome.detailType).toBe('RemediationCompleted');
      if (outcome.detailType !== 'RemediationCompleted') return;
      // Once the followers elect someone else, the frozen member is a follower: no move, no skip.
      expect(outcome.detail.leaderMove).toBe('not-needed');
      expect(reasonsOf(pipeline.events, 'RemediationApproved')).not.toContain('LEADER_UNREACHABLE_PAST_GRACE');
      expect(outcome.detail.newLeader.id).not.toBe(leader.id);
      expect(await memberIds(lab)).toEqual(otherIds(lab, leader.id));
    } finally {
      lab.cont(leader.name);
    }
  });

  it('5 members with two down: a healthy third is blocked, a down one is removed', async () => {
    const lab = (t.lab = await startLab({ members: 5 }));
    const leader = await lab.leader();
    const followers = lab.members.filter((m) => m.id !== leader.id);
    const [downA, downB, healthy] = [followers[0]!, followers[1]!, followers[2]!];
    await lab.kill(downA.name);
    await lab.kill(downB.name);
    const pipeline = (t.pipeline = await startPipeline(lab));

    const blocked = await pipeline.remediate(healthy.name);
    expect(blocked.detailType).toBe('RemediationBlocked');
    expect((blocked.detail as { reason: string }).reason).toBe('QUORUM_AT_RISK');

    const removed = await pipeline.remediate(downA.name);
    expect(removed.detailType).toBe('RemediationCompleted');
    expect(pipeline.calls.removed).toEqual([downA.id]);
    expect(await memberIds(lab)).toEqual(otherIds(lab, downA.id));
  });
});
