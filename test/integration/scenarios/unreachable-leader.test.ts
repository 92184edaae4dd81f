// Scenarios 3 and 4, the seed case: the leader is healthy to raft but unreachable to callers (its
// client proxy cut or blackholed). Inside the grace window the planner waits; past it, it approves
// removal without a move, and a removal through a follower leaves a healthy 2-member cluster.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../functions/core/decision.ts';
import type { LeaderJudgement } from '../../../functions/core/evidence.ts';
import { parsePolicy } from '../../../functions/core/policy.ts';
import { NO_LEADER } from '../../../functions/core/types.ts';
import { waitFor } from '../../../functions/shared/wait-for.ts';
import { labPerTest, Observer, probeView, removeMember, scenarioPolicy, waitUntilGone } from './support.ts';

// A blackholed leader makes every probe last the whole call deadline, so its grace window must span
// a few probes for the retries inside it to be seen at all.
const cases = [
  { n: 3, fault: 'cut', reachability: 'refused', failure: /refused|ECONNREFUSED|UNAVAILABLE/i, said: 'refused', graceMs: scenarioPolicy.graceMs },
  { n: 4, fault: 'blackhole', reachability: 'timeout', failure: /deadline|timed out/i, said: 'timed out', graceMs: 3 * scenarioPolicy.callTimeoutMs },
] as const;

const judgementOf = (d: Decision): Partial<LeaderJudgement> => (d.evidence.judgement ?? {}) as Partial<LeaderJudgement>;

describe.each(cases)('$n. the leader behind a $fault proxy on a real 3-member cluster', ({ fault, reachability, failure, said, graceMs }) => {
  const start = labPerTest();
  const policy = parsePolicy({ ...scenarioPolicy, graceMs });

  it(`waits out the grace window, then approves removal without a move, and a new leader stands`, async () => {
    const { lab, prober, transport } = await start(3);
    const target = await lab.leader();
    await lab.fault(target.name, fault);
    const observer = new Observer({ prober, lab, targetId: target.id, policy });

    // The very first sample cannot span an election timeout.
    const first = await observer.observe();
    expect(first.decision).toMatchObject({ kind: 'retry', reason: 'LEADER_UNREACHABLE_UNCONFIRMED' });
    const path = first.view.members.find((m) => m.id === target.id)!.paths[0]!;
    expect(path).toMatchObject({ path: 'direct', endpoint: target.clientUrl, reachability });
    expect(path.failure?.message).toMatch(failure);
    expect(first.decision.message).toContain(`direct ${target.clientUrl} ${said}`);

    const pastGrace = await observer.observeUntil((d) => d.kind === 'approve', 'approval past the grace window', {
      timeoutMs: graceMs + 10 * policy.callTimeoutMs,
    });
    expect(pastGrace.decision).toMatchObject({ kind: 'approve', leaderMove: 'skipped', reason: 'LEADER_UNREACHABLE_PAST_GRACE' });
    const since = judgementOf(pastGrace.decision).since!;
    expect(since).toBe(first.view.at);
    expect(pastGrace.now - since).toBeGreaterThanOrEqual(graceMs);
    expect(pastGrace.decision.message).toContain(`direct ${target.clientUrl} ${said}`);

    // Everything before the approval was a retry inside the window, after one election timeout
    // confirmed by the followers.
    const inside = observer.observations.slice(0, -1);
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

    const removed = await removeMember({ prober, transport }, pastGrace.view, target.id, policy);
    expect(removed.via).not.toBe(target.name);
    expect(removed.members.map((m) => m.id)).not.toContain(target.id);
    await waitUntilGone(lab, target.id);
    const next = await lab.waitForLeader({ excluding: [target.name] });

    // Quorum holds, seen through the adapter: two voting members, both healthy, one agreed leader.
    const after = await waitFor(
      async () => {
        const view = await probeView(prober, lab);
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
