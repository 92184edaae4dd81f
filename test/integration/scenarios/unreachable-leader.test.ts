// Scenarios 3 and 4, the seed case: the leader is healthy to raft but unreachable to callers (its
// client proxy cut or blackholed). Inside the grace window move-leader retries; past it, it approves
// removal without a move, and remediate removes it through a follower, leaving a healthy 2-member
// cluster. Driven through the application's steps on a real lab, retries honoured when they are due.
import { describe, expect, it } from 'vitest';
import { probeCluster } from '../../../functions/app/view/probe-cluster.ts';
import type { Decision } from '../../../functions/core/common/decision.ts';
import type { LeaderJudgement } from '../../../functions/core/view/evidence.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import { NO_LEADER } from '../../../functions/core/common/types.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { labPerTest, memberAt, scenarioPolicy, waitUntilGone } from './support.ts';

// A blackholed leader makes every probe last the whole call deadline, so its grace window must span
// a few probes for the retries inside it to be seen at all.
const cases = [
  { n: 3, fault: 'cut', reachability: 'refused', failure: /refused|ECONNREFUSED|UNAVAILABLE/i, said: 'refused', graceMs: scenarioPolicy.graceMs },
  { n: 4, fault: 'blackhole', reachability: 'timeout', failure: /deadline|timed out/i, said: 'timed out', graceMs: 3 * scenarioPolicy.callTimeoutMs },
] as const;

const judgementOf = (d: Decision): Partial<LeaderJudgement> => d.evidence.judgement ?? {};

describe.each(cases)('$n. the leader behind a $fault proxy on a real 3-member cluster', ({ fault, reachability, failure, said, graceMs }) => {
  const start = labPerTest();
  const policy = parsePolicy({ ...scenarioPolicy, graceMs });

  it(`waits out the grace window, then approves removal without a move, and a new leader stands`, async () => {
    const { lab, app } = await start(3, { policy });
    const target = await lab.leader();
    await lab.fault(target.name, fault);
    const incident = app.incident(target.name);

    // The very first sample cannot span an election timeout.
    const first = await incident.open();
    expect(first.decision).toMatchObject({ kind: 'retry', reason: 'LEADER_UNREACHABLE_UNCONFIRMED' });
    const path = first.view.members.find((m) => m.id === target.id)!.paths[0]!;
    expect(path).toMatchObject({ path: 'direct', endpoint: target.clientUrl, reachability });
    expect(path.failure?.message).toMatch(failure);
    expect(first.decision.message).toContain(`direct ${target.clientUrl} ${said}`);

    const pastGrace = await incident.observeUntil((d) => d.kind === 'approve', 'approval past the grace window', {
      timeoutMs: graceMs + 10 * policy.callTimeoutMs,
    });
    expect(pastGrace.decision).toMatchObject({ kind: 'approve', leaderMove: 'skipped', reason: 'LEADER_UNREACHABLE_PAST_GRACE' });
    const since = judgementOf(pastGrace.decision).since!;
    expect(since).toBe(first.view.at);
    expect(pastGrace.now - since).toBeGreaterThanOrEqual(graceMs);
    expect(pastGrace.decision.message).toContain(`direct ${target.clientUrl} ${said}`);

    // Everything before the approval was a retry inside the window, after one election timeout
    // confirmed by the followers.
    const inside = incident.observations.slice(0, -1);
    for (const o of inside) {
      expect(o.decision.kind).toBe('retry');
      expect(o.now - since).toBeLessThan(graceMs);
      const span = o.view.at - since;
      expect(o.decision.reason).toBe(span >= policy.electionTimeoutMs ? 'LEADER_UNREACHABLE' : 'LEADER_UNREACHABLE_UNCONFIRMED');
    }
    const confirmed = inside.filter((o) => o.decision.reason === 'LEADER_UNREACHABLE');
    expect(confirmed.length).toBeGreaterThan(0);
    for (const o of confirmed) {
      expect(o.decision.message).toContain(target.name);
      expect(o.decision.message).toContain(`direct ${target.clientUrl} ${said}`);
      expect(o.decision.message).toContain('grace window ends');
    }

    const outcome = await incident.finish();
    expect(outcome).toMatchObject({ detailType: 'RemediationCompleted', detail: { leaderMove: 'skipped' } });
    expect(app.calls.moveLeader).toEqual([]);
    const [removed, ...twice] = app.removals(target.id);
    expect(twice).toEqual([]);
    expect(memberAt(lab, removed!.endpoint)).toBeDefined();
    expect(memberAt(lab, removed!.endpoint)).not.toBe(target.name);
    expect(removed!.members.map((m) => m.id)).not.toContain(target.id);
    await waitUntilGone(lab, target.id);
    const next = await lab.waitForLeader({ excluding: [target.name] });

    // Quorum holds, seen through the application's own probe: two voting members, both healthy,
    // one agreed leader.
    const after = await waitFor(
      async () => {
        const view = await probeCluster(app.deps, app.cluster);
        const settled = view.quorum.voting === 2 && view.quorum.healthyVoting === 2 && view.leader.consensus === 'agreed';
        if (!settled) throw new Error(`quorum ${JSON.stringify(view.quorum)}, leader ${view.leader.consensus}`);
        return view;
      },
      { timeoutMs: 10_000, what: 'a healthy 2-member cluster' },
    );
    expect(after.quorum).toMatchObject({ voting: 2, healthyVoting: 2, size: 2, ok: true });
    expect(after.leader.id).toBe(next.id);
    expect(after.leader.id).not.toBe(target.id);
    expect(after.leader.id).not.toBe(NO_LEADER);
  });
});
