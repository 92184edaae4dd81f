// Scenario 6: the leader frozen with SIGSTOP. Unlike a cut proxy, raft loses it too, so the
// followers elect a new leader within a few election timeouts. move-leader must follow that
// election and never treat the frozen member as an unreachable leader once others lead.
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import { NO_LEADER } from '../../../functions/core/common/types.ts';
import type { ClusterView } from '../../../functions/core/view/view.ts';
import { labPerTest, replayIncident, scenarioPolicy, type Observation, type ReplayStep } from './support.ts';

/** Short probes, so the election has a chance of being seen while it runs. */
const PROBE_DEADLINE_MS = 200;

/**
 * A grace window far longer than an election, so that on a slow machine, followers still naming the
 * frozen member before their election timeout fires cannot lawfully earn a 'skipped' approval.
 */
const policy = parsePolicy({ ...scenarioPolicy, graceMs: 10 * scenarioPolicy.electionTimeoutMs, callTimeoutMs: PROBE_DEADLINE_MS });

/** A follower other than the target reports a leader that is not the target. */
const othersNameAnotherLeader = (view: ClusterView, targetId: string): boolean =>
  view.leader.reports.some((r) => r.memberId !== targetId && r.leaderId !== NO_LEADER && r.leaderId !== targetId);

/** What the rules say for one decision on a frozen leader. */
function expectRulesHold(o: Observation, targetId: string): void {
  const { view, decision } = o;
  const context = `${decision.kind} ${decision.reason}: ${decision.message}`;
  if (othersNameAnotherLeader(view, targetId)) {
    expect(decision, context).not.toMatchObject({ kind: 'approve', leaderMove: 'skipped' });
  }
  if (view.members.length === 0) {
    // No member list came back within the short probe deadline (a loaded machine): no member is
    // known, let alone healthy, so there is nothing to judge and the only lawful decision is a retry.
    expect(decision, context).toMatchObject({ kind: 'retry', reason: 'CLUSTER_UNREACHABLE' });
    return;
  }
  const othersHealthy = view.members.filter((m) => m.id !== targetId).every((m) => m.healthy);
  if (!othersHealthy) return;
  if (view.leader.consensus !== 'agreed') {
    expect(decision, context).toMatchObject({ kind: 'retry', reason: 'ELECTION_IN_PROGRESS' });
  } else if (view.leader.id !== targetId) {
    expect(decision, context).toMatchObject({ kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER' });
  } else {
    // Still named leader by followers that have not timed out yet: never approved this early.
    expect(decision.kind, context).toBe('retry');
  }
}

describe('a leader frozen with SIGSTOP on a real 3-member cluster', () => {
  const start = labPerTest();

  it('6. move-leader follows the election and then judges the frozen member a follower', async () => {
    const { lab, app, onTeardown } = await start(3, { policy });
    const target = await lab.leader();
    lab.stop(target.name);
    onTeardown(() => lab.cont(target.name));
    const incident = app.incident(target.name);

    const settled = await incident.observeUntil((d) => d.kind === 'approve', 'a new leader and an approval', {
      timeoutMs: 20 * policy.electionTimeoutMs,
    });
    const newLeader = await lab.waitForLeader({ excluding: [target.name] });

    for (const o of incident.observations) expectRulesHold(o, target.id);
    const election = incident.observations.filter((o) => o.decision.reason === 'ELECTION_IN_PROGRESS');
    for (const o of election) expect(o.decision.message).toMatch(/No leader is settled|term is moving/);

    // The final classification: the frozen member is a follower of the new leader, no move needed.
    expect(settled.decision).toMatchObject({ kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER' });
    expect(settled.decision.evidence.judgement).toMatchObject({ verdict: 'TARGET_NOT_LEADER', leaderId: newLeader.id });
    expect(settled.view.members.find((m) => m.id === target.id)).toMatchObject({ reachable: false });
    expect(settled.view.members.find((m) => m.id === target.id)?.paths[0]?.reachability).toBe('timeout');
    const sawOldLeader = incident.observations.slice(0, -1).some((o) => o.view.leader.reports.some((r) => r.leaderId === target.id));
    if (sawOldLeader) expect(settled.decision.message).toMatch(/^Leadership moved from/);
    expect(app.calls.moveLeader).toEqual([]);

    // However long the frozen member stays unreachable, followers that name another leader never
    // let it count as an unreachable leader past grace: the same steps on the first and the settled
    // probe, the settled one taken 10 grace windows later and decided on 20 windows later.
    const first = incident.observations[0]!;
    const steps: ReplayStep[] = [
      ...(first === settled ? [] : [{ sample: app.sampleOf(first.view), decideAt: first.now }]),
      { sample: { ...app.sampleOf(settled.view), at: first.view.at + 10 * policy.graceMs }, decideAt: first.view.at + 20 * policy.graceMs },
    ];
    const replayed = await replayIncident({ memberName: target.name, endpoints: lab.endpoints(), policy, steps });
    if (first !== settled) expect(replayed[0]).toMatchObject({ kind: first.decision.kind, reason: first.decision.reason });
    expect(replayed.at(-1)).toMatchObject({ kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER' });
  });
});
