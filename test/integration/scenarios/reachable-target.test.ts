// Scenarios 1 and 2: the target answers. A follower goes without a move; a leader hands over
// leadership over the real transport first, and only then goes. Driven through the application's
// steps (probe-members, move-leader, schedule-retry, remediate) on a real lab.
import { describe, expect, it } from 'vitest';
import { planIncident } from '../../../functions/app/common/plan-incident.ts';
import type { MoveAttempt } from '../../../functions/core/move/move-steps.ts';
import { labPerTest, memberAt, waitUntilGone } from './support.ts';

describe('a reachable target on a real 3-member cluster', () => {
  const start = labPerTest();

  it('1. a follower target is approved without a move and removed through a healthy member', async () => {
    const { lab, app } = await start(3);
    const leader = await lab.leader();
    const target = lab.members.find((m) => m.id !== leader.id)!;

    const incident = app.incident(target.name);
    const { view, decision } = await incident.open();
    expect(view.members.map((m) => m.id).sort()).toEqual(lab.members.map((m) => m.id).sort());
    expect(decision).toMatchObject({ kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER' });
    expect(decision.message).toContain(target.name);
    expect(decision.message).toContain(leader.name);

    const outcome = await incident.finish();
    expect(outcome).toMatchObject({ detailType: 'RemediationCompleted', detail: { leaderMove: 'not-needed' } });
    expect(app.calls.moveLeader).toEqual([]);
    const [removed, ...again] = app.removals(target.id);
    expect(again).toEqual([]);
    expect(memberAt(lab, removed!.endpoint)).toBeDefined();
    expect(memberAt(lab, removed!.endpoint)).not.toBe(target.name);
    expect(removed!.members.map((m) => m.id)).not.toContain(target.id);
    const list = await waitUntilGone(lab, target.id);
    expect(list.map((m) => m.name).sort()).toEqual(
      lab.members
        .filter((m) => m.id !== target.id)
        .map((m) => m.name)
        .sort(),
    );
  });

  it('2. a reachable leader target is moved first, verified by a fresh probe, then removed', async () => {
    const { lab, app } = await start(3);
    const target = await lab.leader();
    const others = lab.members.filter((m) => m.id !== target.id);

    const incident = app.incident(target.name);
    const step = await incident.open();

    // What move-leader planned on the incident it was given, with the planner call the step makes.
    const move = planIncident(app.deps, app.cluster, step.before, { retryCount: 0 });
    expect(move).toMatchObject({ kind: 'move-leader', reason: 'LEADER_MOVE_REQUIRED', leaderId: target.id, paths: ['direct'] });
    if (move.kind !== 'move-leader') throw new Error(`planned ${move.kind}`);
    expect([...move.candidates].sort()).toEqual(others.map((m) => m.id).sort());
    expect(move.message).toContain(target.name);

    // What move-leader did with it: one MoveLeader to the leader itself, then a verifying probe.
    expect(step.decision).toMatchObject({ kind: 'approve', leaderMove: 'moved', reason: 'LEADER_MOVED' });
    const moved = app.calls.moveLeader.at(-1)!;
    expect(moved).toMatchObject({ outcome: 'moved', path: 'direct', endpoint: target.clientUrl });
    expect(move.candidates).toContain(moved.to);
    const attempts = step.decision.evidence.moveAttempts as MoveAttempt[] | undefined;
    expect(attempts?.at(-1)).toMatchObject({ outcome: 'moved', path: 'direct', endpoint: target.clientUrl, candidateId: moved.to });
    expect(step.after.views).toHaveLength(step.before.views.length + 1);
    const verifyView = step.after.views.at(-1)!;
    expect(verifyView.leader).toMatchObject({ consensus: 'agreed', id: moved.to });
    // Ground truth on the real ports, not through the transport under test.
    expect((await lab.leader()).id).toBe(moved.to);

    // Planning again with the verify probe, as remediate re-checks the gates before removing: the
    // target is a follower now, and the planner knows it led.
    const again = planIncident(app.deps, app.cluster, step.after, { retryCount: 0 });
    expect(again).toMatchObject({ kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER' });
    expect(again.message).toMatch(/^Leadership moved from/);

    const outcome = await incident.finish();
    expect(outcome).toMatchObject({ detailType: 'RemediationCompleted', detail: { leaderMove: 'moved' } });
    expect(app.calls.moveLeader).toHaveLength(1);
    const [removed, ...twice] = app.removals(target.id);
    expect(twice).toEqual([]);
    expect(removed!.members.map((m) => m.id)).not.toContain(target.id);
    await waitUntilGone(lab, target.id);
    const next = await lab.waitForLeader({ excluding: [target.name] });
    expect(others.map((m) => m.id)).toContain(next.id);
  });
});
