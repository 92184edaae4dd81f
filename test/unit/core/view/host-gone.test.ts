// Whether the target's machine is known gone, from the host evidence kube access put in the view:
// each rule, the guard that keeps an unreadable naming scheme from looking like loss, and the
// planner deriving LEADER_GONE from it.
import { describe, expect, it } from 'vitest';
import { hostGoneFinding } from '../../../../functions/core/view/host-gone.ts';
import { plan } from '../../../../functions/core/plan/plan.ts';
import type { HostEvidence } from '../../../../functions/core/common/types.ts';
import { cluster, fixedRandom, id, policy, view, withHosts } from '../fixtures.ts';

const T0 = 600_000;
const found = (i: number): HostEvidence => ({ node: `cp-${i}`, nodeExists: true, pod: `kube-system/etcd-cp-${i}` });
const unmatched: HostEvidence = { nodeExists: false };
/** Three voting members, every Node found; `target` overrides member 0's evidence. */
const hosted = (target: HostEvidence | undefined, others: Record<number, HostEvidence> = { 1: found(1), 2: found(2) }) =>
  withHosts(cluster(T0, 3), target ? { ...others, 0: target } : others);

describe('hostGoneFinding', () => {
  it('says nothing without a view, for a member not in it, or for a member without host evidence', () => {
    expect(hostGoneFinding(undefined, id(0))).toBeUndefined();
    expect(hostGoneFinding(hosted(found(0)), id(7))).toBeUndefined();
    expect(hostGoneFinding(hosted(undefined), id(0))).toBeUndefined();
    expect(hostGoneFinding(cluster(T0, 3), id(0))).toBeUndefined();
  });

  it('a Machine being deleted is gone, whether or not its Node is still listed', () => {
    const deleting = { machine: { name: 'wl-cp-0', deleting: true } };
    expect(hostGoneFinding(hosted({ ...found(0), ...deleting }), id(0))).toBe('its Machine wl-cp-0 is being deleted');
    expect(hostGoneFinding(hosted({ node: 'cp-0', nodeExists: false, ...deleting }), id(0))).toBe('its Machine wl-cp-0 is being deleted');
  });

  it('a Node that exists, with a Machine not being deleted, is not gone', () => {
    expect(hostGoneFinding(hosted(found(0)), id(0))).toBeUndefined();
    expect(hostGoneFinding(hosted({ ...found(0), machine: { name: 'wl-cp-0', deleting: false } }), id(0))).toBeUndefined();
  });

  it('a known Node missing from the Node list is gone, naming the pod that still names it', () => {
    expect(hostGoneFinding(hosted({ node: 'cp-0', nodeExists: false, pod: 'kube-system/etcd-cp-0' }), id(0))).toBe(
      'its Node cp-0 no longer exists (its etcd pod kube-system/etcd-cp-0 still names it)',
    );
    expect(hostGoneFinding(hosted({ node: 'cp-0', nodeExists: false }), id(0))).toBe('its Node cp-0 no longer exists');
    // The guard is for unmatched members only: a known Node is gone whatever the others show.
    expect(hostGoneFinding(hosted({ node: 'cp-0', nodeExists: false }, { 1: unmatched }), id(0))).toBe('its Node cp-0 no longer exists');
  });

  describe('a member matched to no Node and no pod', () => {
    const gone = 'no Node or etcd pod runs it any more, while every other member’s Node was found';

    it('is gone when every other voting member’s Node was found: matching works in this cluster', () => {
      expect(hostGoneFinding(hosted(unmatched), id(0))).toBe(gone);
    });

    it('is not, when another voting member was not matched either, or has no evidence', () => {
      expect(hostGoneFinding(hosted(unmatched, { 1: found(1), 2: unmatched }), id(0))).toBeUndefined();
      expect(hostGoneFinding(hosted(unmatched, { 1: found(1) }), id(0))).toBeUndefined();
      expect(hostGoneFinding(hosted(unmatched, { 1: found(1), 2: { node: 'cp-2', nodeExists: false } }), id(0))).toBeUndefined();
    });

    it('is not, when there is no other voting member to prove matching', () => {
      expect(hostGoneFinding(withHosts(cluster(T0, 1), { 0: unmatched }), id(0))).toBeUndefined();
      const learnersOnly = view(T0, [
        { i: 0, leader: 0 },
        { i: 1, learner: true, leader: 0 },
      ]);
      expect(hostGoneFinding(withHosts(learnersOnly, { 0: unmatched, 1: found(1) }), id(0))).toBeUndefined();
    });

    it('ignores learners, matched or not', () => {
      const withLearner = view(T0, [
        { i: 0, leader: 1 },
        { i: 1, leader: 1 },
        { i: 2, leader: 1 },
        { i: 3, learner: true, leader: 1 },
      ]);
      expect(hostGoneFinding(withHosts(withLearner, { 0: unmatched, 1: found(1), 2: found(2) }), id(0))).toBe(gone);
      expect(hostGoneFinding(withHosts(withLearner, { 0: unmatched, 1: found(1), 2: found(2), 3: unmatched }), id(0))).toBe(gone);
    });
  });
});

describe('the planner reads it from the view', () => {
  const deadLeader = cluster(T0, 3, { leader: 0, override: { 0: { paths: 'refused' } } });
  const input = (samples = [deadLeader]) => ({
    samples,
    targetId: id(0),
    incident: { openedAt: T0 - 1_000, attempt: 0, immediateReprobes: 0 },
    remediation: { retryCount: 0 },
    policy: policy({ electionTimeoutMs: 1_000 }),
    now: T0,
    random: fixedRandom(0.5),
  });

  it('a leader whose Node is gone is removed without a move, inside the grace window', () => {
    const d = plan(input([withHosts(deadLeader, { 0: { node: 'cp-0', nodeExists: false }, 1: found(1), 2: found(2) })]));
    expect(d).toMatchObject({ kind: 'approve', reason: 'LEADER_GONE', leaderMove: 'skipped', evidence: { targetGone: 'its Node cp-0 no longer exists' } });
  });

  it('without host evidence the same leader waits out the grace window', () => {
    const d = plan(input());
    expect(d.reason).not.toBe('LEADER_GONE');
    expect(d.evidence.targetGone).toBeUndefined();
  });
});
