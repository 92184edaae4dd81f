// A learner reported unhealthy: removed end to end with no leader move, and the voting members
// keep the leader they had.
import { describe, expect, it } from 'vitest';
import { startLab } from '../../../infra/lab/lab.ts';
import { labPerTest, reasonsOf, startPipeline } from './pipeline.ts';

describe('learner target end to end', () => {
  const t = labPerTest();

  it('removes the learner without a move; the voting members keep their leader', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const learner = await lab.addLearner({ timeoutMs: 20_000 });
    const before = await lab.memberList();
    expect(before.find((m) => m.id === learner.id)).toMatchObject({ name: learner.name, isLearner: true });
    expect(before).toHaveLength(4);
    const leader = await lab.leader();
    const termBefore = (await lab.status(leader.name)).raftTerm;
    const voting = lab.members
      .filter((m) => !m.isLearner)
      .map((m) => m.id)
      .sort();
    const pipeline = (t.pipeline = await startPipeline(lab));

    const outcome = await pipeline.remediate(learner.name);

    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationCompleted');
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.target).toMatchObject({ memberId: learner.id, name: learner.name });
    expect(outcome.detail.leaderMove).toBe('not-needed');
    expect(outcome.detail.newLeader.id).toBe(leader.id);
    expect(reasonsOf(pipeline.events, 'RemediationApproved')).toEqual(['TARGET_IS_LEARNER']);
    expect(pipeline.events.filter((e) => e.detailType === 'LeaderMoved')).toEqual([]);
    expect(pipeline.calls.moveLeader).toEqual([]);
    // Only the learner was ever named in a removal, and etcd accepted exactly one.
    expect(new Set(pipeline.calls.memberRemove)).toEqual(new Set([learner.id]));
    expect(pipeline.calls.removed).toEqual([learner.id]);

    // etcd's own word: the three voting members are left, none a learner, under the same leader.
    const after = await lab.memberList();
    expect(after.map((m) => m.id).sort()).toEqual(voting);
    expect(after.every((m) => !m.isLearner)).toBe(true);
    expect((await lab.leader()).id).toBe(leader.id);
    for (const id of voting) {
      const member = lab.members.find((m) => m.id === id)!;
      const status = await lab.status(member.name);
      expect(status.leaderId, `${member.name} names the leader`).toBe(leader.id);
      // No election either: the term is the one from before the incident.
      expect(status.raftTerm, `${member.name}'s term`).toBe(termBefore);
    }
  });
});
