// Done means replaced, on real etcd: a removal awaits its replacement, completes once the lab plays
// kubeadm join (a learner added, started with --initial-cluster-state existing, promoted), raises
// ReplacementOverdue when none comes within the window, and a learner that never starts is
// removed on its own while the voting members stay as they are.
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab } from '../../../infra/lab/lab.ts';
import { labPerTest, startPipeline, type Pipeline } from './pipeline.ts';
import { startedAhead } from './started-ahead.ts';

const eventOf = async <T extends EventEnvelope['detailType']>(
  pipeline: Pipeline,
  type: T,
  timeoutMs = 30_000,
): Promise<Extract<EventEnvelope, { detailType: T }>> =>
  waitFor(async () => pipeline.events.find((e): e is Extract<EventEnvelope, { detailType: T }> => e.detailType === type), {
    timeoutMs,
    what: `a ${type} event`,
  });

describe.sequential('done means replaced', () => {
  const t = labPerTest();
  // Every test removes a member, each from a lab started during the tests before it (started-ahead.ts);
  // two ahead, as the overdue case is too short for the next lab to age behind it.
  const labs = startedAhead(
    4,
    () => startLab({ members: 3 }),
    (lab) => lab.down(),
    { ahead: 2 },
  );

  it('a removed follower awaits its replacement; the replacement joins, is promoted, and the incident completes with its time to replacement', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { replacement: { windowMs: 60_000, checkEveryMs: 300 } } }));

    const removed = await pipeline.remediate(follower.name);
    expect(removed.detailType, JSON.stringify(removed.detail).slice(0, 1500)).toBe('RemediationCompleted');
    const awaiting = await pipeline.runtime.store.getIncident(removed.detail.incidentId);
    expect(awaiting?.state).toBe('awaiting-replacement');

    const replacement = await lab.joinReplacement({ timeoutMs: 30_000 });
    const replaced = await eventOf(pipeline, 'RemediationReplaced');
    expect(replaced.detail).toMatchObject({
      incidentId: removed.detail.incidentId,
      reason: 'REPLACEMENT_JOINED',
      target: { memberId: follower.id, name: follower.name },
    });
    expect(replaced.detail.replacedAfterMs).toBeGreaterThan(0);
    expect(replaced.detail.message).toContain(`${replacement.name} (${replacement.id}) joined in its place`);
    expect(await pipeline.runtime.store.getIncident(removed.detail.incidentId)).toMatchObject({
      state: 'completed',
      result: { replacedAfterMs: replaced.detail.replacedAfterMs },
    });
    expect(pipeline.events.filter((e) => e.detailType === 'ReplacementOverdue')).toEqual([]);
    const members = await lab.memberList();
    expect(members.map((m) => m.id).sort()).toEqual([...lab.members.filter((m) => m.id !== follower.id).map((m) => m.id)].sort());
    expect(members.every((m) => !m.isLearner)).toBe(true);
  });

  it('no replacement within the window: ReplacementOverdue once, naming the member and what to check; the incident stays awaiting-replacement', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { replacement: { windowMs: 1_500, checkEveryMs: 300 } } }));

    const removed = await pipeline.remediate(follower.name);
    expect(removed.detailType).toBe('RemediationCompleted');
    const overdue = await eventOf(pipeline, 'ReplacementOverdue');
    expect(overdue.detail).toMatchObject({
      incidentId: removed.detail.incidentId,
      reason: 'REPLACEMENT_OVERDUE',
      windowMs: 1_500,
      target: { memberId: follower.id },
    });
    expect(overdue.detail.message).toMatch(
      new RegExp(
        `^${follower.name} \\(${follower.id}\\) was removed at .+ the cluster has 2 of its 3 voting members\\. Check the replacement Machine and its kubeadm join`,
      ),
    );
    expect(await pipeline.runtime.store.getIncident(removed.detail.incidentId)).toMatchObject({ state: 'awaiting-replacement' });
    expect(pipeline.events.filter((e) => e.detailType === 'ReplacementOverdue' || e.detailType === 'RemediationReplaced')).toHaveLength(1);
  });

  it('a learner added for the replacement that never starts is removed past stuckLearnerAfterMs, voting members untouched; the replacement is still owed, and completes when one joins', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { replacement: { windowMs: 60_000, checkEveryMs: 300 }, stuckLearnerAfterMs: 1_000 } }));

    const removed = await pipeline.remediate(follower.name);
    expect(removed.detailType).toBe('RemediationCompleted');
    const voting = (await lab.memberList()).map((m) => m.id).sort();
    // kubeadm join added its member, then failed before etcd started.
    const stuck = await lab.addUnstartedLearner({ timeoutMs: 20_000 });

    const cleaned = await eventOf(pipeline, 'LearnerRemoved');
    expect(cleaned.detail).toMatchObject({
      incidentId: removed.detail.incidentId,
      reason: 'STUCK_LEARNER_REMOVED',
      learner: { memberId: stuck, name: '' },
      evidence: { started: false },
    });
    expect(cleaned.detail.message).toContain(`The replacement for ${follower.name} (${follower.id}) is still owed: the incident stays awaiting-replacement.`);
    expect(pipeline.calls.removed).toEqual([follower.id, stuck]);
    const after = await lab.memberList();
    expect(after.map((m) => m.id).sort()).toEqual(voting);
    expect(after.every((m) => !m.isLearner)).toBe(true);
    expect(await pipeline.runtime.store.getIncident(removed.detail.incidentId)).toMatchObject({ state: 'awaiting-replacement' });

    await lab.joinReplacement({ timeoutMs: 30_000 });
    expect((await eventOf(pipeline, 'RemediationReplaced')).detail.incidentId).toBe(removed.detail.incidentId);
  });

  it('a learner that never started holds a removal up (MEMBER_NOT_READY): it is waited for, removed past stuckLearnerAfterMs, and the removal goes on', async () => {
    const lab = (t.lab = await labs.take());
    const leader = await lab.waitForLeader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const stuck = await lab.addUnstartedLearner({ timeoutMs: 20_000 });
    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { stuckLearnerAfterMs: 1_500 } }));

    const removed = await pipeline.remediate(follower.name);
    expect(removed.detailType, JSON.stringify(removed.detail).slice(0, 1500)).toBe('RemediationCompleted');
    expect(pipeline.events.filter((e) => e.detailType === 'RetryRequested').map((e) => (e.detail as { reason: string }).reason)).toContain('LEARNER_PENDING');
    const cleaned = pipeline.events.find((e) => e.detailType === 'LearnerRemoved');
    expect(cleaned?.detail).toMatchObject({ incidentId: removed.detail.incidentId, reason: 'STUCK_LEARNER_REMOVED', learner: { memberId: stuck } });
    // The learner first, which cost no vote; then the member reported.
    expect(pipeline.calls.removed).toEqual([stuck, follower.id]);
    expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(
      lab.members
        .filter((m) => m.id !== follower.id)
        .map((m) => m.id)
        .sort(),
    );
  });
});
