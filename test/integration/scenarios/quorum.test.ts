// Scenarios 5 and 7: the quorum gate on real clusters with members killed, through the
// application's steps. It blocks whenever the removal would leave fewer healthy voters than the
// quorum of what remains, and lets a dead member go.
import { describe, expect, it } from 'vitest';
import { labPerTest, scenarioPolicy, waitUntilGone } from './support.ts';

describe('the quorum gate on real clusters with members down', () => {
  const start = labPerTest();

  it('5. blocks removing an unreachable leader while another of its 3 members is dead', async () => {
    const { lab, app } = await start(3);
    const target = await lab.leader();
    const dead = lab.members.find((m) => m.id !== target.id)!;
    await lab.fault(target.name, 'cut');
    await lab.kill(dead.name);

    const { view, decision } = await app.incident(target.name).open();
    expect(view.members.find((m) => m.id === dead.id)?.reachable).toBe(false);
    expect(decision).toMatchObject({ kind: 'block', reason: 'QUORUM_AT_RISK' });
    expect(decision.message).toContain(target.name);
    expect(decision.message).toContain(dead.name);
    expect(decision.evidence.gate).toMatchObject({ votingAfter: 2, healthyAfter: 1, needed: 2, unhealthy: [dead.id] });
    // The gate only reads: the leader still leads and all three are still members.
    expect(app.calls.memberRemove).toEqual([]);
    expect(app.calls.moveLeader).toEqual([]);
    expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(lab.members.map((m) => m.id).sort());
    expect((await lab.waitForLeader()).id).toBe(target.id);
  });

  it('7. with 2 of 5 members dead, blocks removing a healthy one but removes a dead one', async () => {
    // Shrinking allowed: the last check is the gate's own, not the wait for deadA's replacement.
    const { lab, app } = await start(5, { policy: { ...scenarioPolicy, allowShrink: true } });
    const leader = await lab.leader();
    const followers = lab.members.filter((m) => m.id !== leader.id);
    const [deadA, deadB, healthy] = followers as [typeof leader, typeof leader, typeof leader];
    await lab.kill(deadA.name);
    await lab.kill(deadB.name);

    const keep = await app.incident(healthy.name).open();
    expect(keep.decision).toMatchObject({ kind: 'block', reason: 'QUORUM_AT_RISK' });
    expect(keep.decision.message).toContain(healthy.name);
    expect(keep.decision.message).toContain(deadA.name);
    expect(keep.decision.message).toContain(deadB.name);
    expect(keep.decision.evidence.gate).toMatchObject({ votingAfter: 4, healthyAfter: 2, needed: 3 });

    const dropping = app.incident(deadA.name);
    const drop = await dropping.open();
    expect(drop.decision).toMatchObject({ kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER' });
    expect(drop.decision.evidence.gate).toMatchObject({ reason: 'QUORUM_SAFE', votingAfter: 4, healthyAfter: 3, needed: 3 });

    const outcome = await dropping.finish();
    expect(outcome.detailType).toBe('RemediationCompleted');
    const [removed, ...twice] = app.removals(deadA.id);
    expect(twice).toEqual([]);
    expect(removed!.members.map((m) => m.id)).not.toContain(deadA.id);
    expect(app.calls.memberRemove.map((c) => c.id)).not.toContain(healthy.id);
    const list = await waitUntilGone(lab, deadA.id);
    expect(list.map((m) => m.id).sort()).toEqual(
      lab.members
        .filter((m) => m.id !== deadA.id)
        .map((m) => m.id)
        .sort(),
    );
    expect(list.map((m) => m.id)).toContain(deadB.id);

    // The gate counts from the membership as it is now: of 4 with one dead, a healthy follower may
    // go, since 2 of the remaining 3 still meet their quorum of 2 (without allowShrink, the removal
    // record in etcd makes it wait for deadA's replacement: REPLACEMENT_PENDING).
    const now = await app.incident(healthy.name).open();
    expect(now.decision).toMatchObject({ kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER' });
    expect(now.decision.evidence.gate).toMatchObject({ votingNow: 4, votingAfter: 3, healthyAfter: 2, needed: 2, unhealthy: [deadB.id] });
  });
});
