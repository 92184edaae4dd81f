// Scenarios 1 and 2: the target answers. A follower goes without a move; a leader hands over
// leadership over the real transport first, and only then goes.
import { describe, expect, it } from 'vitest';
import { plan } from '../../../functions/core/plan.ts';
import type { MoveLeaderDecision } from '../../../functions/core/move-steps.ts';
import { driveMove, labPerTest, Observer, removeMember, scenarioPolicy, waitUntilGone } from './support.ts';

describe('a reachable target on a real 3-member cluster', () => {
  const start = labPerTest();

  it('1. a follower target is approved without a move and removed through a healthy member', async () => {
    const { lab, prober, transport } = await start(3);
    const leader = await lab.leader();
    const target = lab.members.find((m) => m.id !== leader.id)!;

    const { view, decision } = await new Observer({ prober, lab, targetId: target.id }).observe();
    expect(view.members.map((m) => m.id).sort()).toEqual(lab.members.map((m) => m.id).sort());
    expect(decision).toMatchObject({ kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER' });
    expect(decision.message).toContain(target.name);
    expect(decision.message).toContain(leader.name);

    const removed = await removeMember({ prober, transport }, view, target.id);
    expect(removed.via).not.toBe(target.name);
    expect(removed.members.map((m) => m.id)).not.toContain(target.id);
    const list = await waitUntilGone(lab, target.id);
    expect(list.map((m) => m.name).sort()).toEqual(lab.members.filter((m) => m.id !== target.id).map((m) => m.name).sort());
  });

  it('2. a reachable leader target is moved first, verified by a fresh probe, then removed', async () => {
    const { lab, prober, transport } = await start(3);
    const target = await lab.leader();
    const others = lab.members.filter((m) => m.id !== target.id);

    const { view, decision } = await new Observer({ prober, lab, targetId: target.id }).observe();
    expect(decision).toMatchObject({ kind: 'move-leader', reason: 'LEADER_MOVE_REQUIRED', leaderId: target.id, paths: ['direct'] });
    const move = decision as MoveLeaderDecision;
    expect([...move.candidates].sort()).toEqual(others.map((m) => m.id).sort());
    expect(move.message).toContain(target.name);

    const run = await driveMove({ prober, transport }, lab, view, move);
    expect(run.decision).toMatchObject({ kind: 'approve', leaderMove: 'moved', reason: 'LEADER_MOVED' });
    const moved = run.attempts.at(-1)!;
    expect(moved).toMatchObject({ outcome: 'moved', path: 'direct', endpoint: target.clientUrl });
    expect(move.candidates).toContain(moved.candidateId);
    expect(run.verifyView?.leader).toMatchObject({ consensus: 'agreed', id: moved.candidateId });
    // Ground truth on the real ports, not through the transport under test.
    expect((await lab.leader()).id).toBe(moved.candidateId);

    // Planning again on the verify probe: the target is a follower now, and the planner knows it led.
    const again = plan({
      samples: [view, run.verifyView!],
      targetId: target.id,
      incident: { openedAt: view.at, attempt: 1, immediateReprobes: 0 },
      remediation: { retryCount: 0 },
      policy: scenarioPolicy,
      now: Date.now(),
      random: () => 0.5,
    });
    expect(again).toMatchObject({ kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER' });
    expect(again.message).toMatch(/^Leadership moved from/);

    const removed = await removeMember({ prober, transport }, run.verifyView!, target.id);
    expect(removed.members.map((m) => m.id)).not.toContain(target.id);
    await waitUntilGone(lab, target.id);
    const next = await lab.waitForLeader({ excluding: [target.name] });
    expect(others.map((m) => m.id)).toContain(next.id);
  });
});
