import { describe, expect, it } from 'vitest';
import { plan } from '../../../../functions/core/plan/plan.ts';
import { parsePolicy } from '../../../../functions/core/policy/policy.ts';
import { rankMoveCandidates } from '../../../../functions/core/plan/candidates.ts';
import { guardDeadlineMs, probeDeadlineMs } from '../../../../functions/core/budget/probe-deadline.ts';
import { buildClusterView, type ClusterView } from '../../../../functions/core/view/view.ts';
import { cluster, failureOf, sample } from '../fixtures.ts';

const timedOut = (at: number): ClusterView =>
  buildClusterView({
    at,
    members: [],
    seeds: [],
    listFailures: ['http://127.0.0.1:1', 'http://127.0.0.1:2'].map((endpoint) => ({
      path: 'direct' as const,
      endpoint,
      reachability: 'timeout' as const,
      latencyMs: 2_000,
      failure: failureOf('timeout'),
    })),
  });

const shortBySlowness = (at: number): ClusterView => cluster(at, 3, { leader: 1, override: { 0: { paths: 'refused' }, 2: { paths: 'timeout' } } });

describe('probeDeadlineMs', () => {
  const policy = { callTimeoutMs: 2_000 };
  it.each([
    ['no history', [], 2_000],
    ['a probe that answered', [cluster(0, 3)], 2_000],
    ['one that timed out everywhere', [timedOut(0)], 4_000],
    ['three in a row', [timedOut(0), timedOut(1), timedOut(2)], 16_000],
    ['many in a row, capped', Array.from({ length: 9 }, (_, i) => timedOut(i)), 30_000],
    ['an answer since resets it', [timedOut(0), timedOut(1), cluster(2, 3)], 2_000],
    // etcd-0 refused, etcd-2 ran out of time: one healthy member of three, short of any removal's quorum.
    ['a member that timed out leaving the cluster short of a quorum', [shortBySlowness(0)], 4_000],
    ['two in a row', [shortBySlowness(0), shortBySlowness(1)], 8_000],
    // The same two members refusing: down, not slow; waiting longer learns nothing.
    ['the members short of a quorum refused', [cluster(0, 3, { leader: 1, override: { 0: { paths: 'refused' }, 2: { paths: 'refused' } } })], 2_000],
    // Five members, one timed out: three healthy still make a quorum of four.
    ['a member that timed out, the rest a quorum', [cluster(0, 5, { leader: 1, override: { 0: { paths: 'refused' }, 2: { paths: 'timeout' } } })], 2_000],
  ] as const)('%s', (_, views, expected) => {
    expect(probeDeadlineMs(policy, views)).toBe(expected);
  });

  it.each([
    // Members that answered in 1.4 s and 2.8 s: the next probe waits twice the slowest.
    ['answers slower than half the call deadline', [slowView([1_400, 2_800])], 5_600],
    ['answers well inside it', [slowView([40, 900])], 2_000],
    ['a very slow answer, capped', [slowView([25_000])], 30_000],
    // A member that timed out measured its deadline, not an answer: it does not count.
    ['a timed-out member among quick answers', [slowView([40, 50], 1)], 2_000],
  ] as const)('after %s', (_, views, expected) => {
    expect(probeDeadlineMs(policy, views)).toBe(expected);
  });
});

describe('guardDeadlineMs', () => {
  const policy = { callTimeoutMs: 2_000, lockLeaseMs: 30_000 };
  it.each([
    ['no view', undefined, 2_000],
    ['quick answers', slowView([40, 900]), 2_000],
    ['members answering in 2.8 s', slowView([1_400, 2_800]), 5_600],
    ['answers slower than a sixth of the lease: a third of the lease, so a renewal fits it', slowView([9_000, 9_500]), 10_000],
  ] as const)('%s', (_, view, expected) => {
    // The target (etcd-0) is not asked: its own latency does not count.
    expect(guardDeadlineMs(policy, view ? rankMoveCandidates(view, view.members[0]!.id) : [])).toBe(expected);
  });
});

/** A 3-member view whose members 1.. answered with these latencies (member 0, the target, in 5 ms); `timedOut` more that did not. */
function slowView(latencies: readonly number[], timedOut = 0): ClusterView {
  const specs = [{ i: 0, leader: 0, latencyMs: 5 }, ...latencies.map((latencyMs, k) => ({ i: k + 1, leader: 0, latencyMs }))];
  const silent = Array.from({ length: timedOut }, (_, k) => ({ i: specs.length + k, leader: 0, paths: 'timeout' as const, latencyMs: 2_000 }));
  return buildClusterView(sample(0, [...specs, ...silent]));
}

describe('a slow network, said in those words', () => {
  it('names the deadline, the endpoints, the next deadline and the flag to raise', () => {
    const samples = [timedOut(0), timedOut(5_000)];
    const decision = plan({
      samples,
      targetId: 'memberName etcd-1',
      incident: { openedAt: 0, attempt: 1, immediateReprobes: 0 },
      remediation: { retryCount: 0 },
      policy: parsePolicy({ callTimeoutMs: 2_000 }),
      now: 6_000,
      random: () => 0.5,
    });
    expect(decision).toMatchObject({ kind: 'retry', reason: 'CLUSTER_UNREACHABLE' });
    expect(decision.message).toMatch(
      /^No member answered within the deadline of 2 s: all 2 endpoints timed out \(http:\/\/127\.0\.0\.1:1, http:\/\/127\.0\.0\.1:2\), so .* cannot be judged; the network may be slow: the next probe waits 8 s; raise the call deadline \(--timeout, policy callTimeout\) if it stays so; we look again at /,
    );
  });
});
