// The seed case through the four handlers and the embedded runtime: the leader is unreachable to
// us (its kubelet path is down), so it is removed without a move once the grace window passes.
import { describe, expect, it } from 'vitest';
import { startLab } from '../../../infra/lab/lab.ts';
import { expectRemovedWithoutMove, labPerTest, reasonsOf, startPipeline } from './pipeline.ts';

describe.sequential('seed case end to end', () => {
  const t = labPerTest();

  it.each([
    ['cut', 'refused'],
    ['blackhole', 'timed out'],
  ] as const)('leader %s: retries inside grace, then removes it without a move and a new leader stands', async (fault, said) => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    await lab.fault(leader.name, fault);
    // A blackholed probe costs a whole call deadline; the window must outlast two of them.
    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { graceMs: 3_000 } }));

    const outcome = await pipeline.remediate(leader.name);

    // Inside the grace window the plan retried, naming the path and how it failed.
    expectRemovedWithoutMove(pipeline, outcome, leader, said);
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(reasonsOf(pipeline.events, 'RemediationApproved')).toEqual(expect.arrayContaining(['LEADER_UNREACHABLE_PAST_GRACE']));
    // No move was sent to an unreachable leader; exactly the target was removed.
    expect(pipeline.calls.moveLeader).toEqual([]);
    expect(new Set(pipeline.calls.memberRemove)).toEqual(new Set([leader.id]));
    const members = await lab.memberList();
    expect(members.map((m) => m.id).sort()).toEqual(
      lab.members
        .filter((m) => m.id !== leader.id)
        .map((m) => m.id)
        .sort(),
    );
    const newLeader = await lab.waitForLeader({ excluding: [leader.name], timeoutMs: 10_000 });
    expect(newLeader.id).toBe(outcome.detail.newLeader.id);
    expect(outcome.detail.timeline.map((t) => t.step)).toEqual(
      expect.arrayContaining(['incident-opened', 'member-removed', 'leader-elected', 'actuator-called']),
    );
  });
});
