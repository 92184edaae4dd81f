// Done means replaced: each check of a removal's replacement, from one view, says whole, short,
// overdue (once, then slower), or no longer checked; and a learner past its window is stuck.
import { describe, expect, it } from 'vitest';
import {
  CHECKS_END_AFTER_OVERDUE_MS,
  checkReplacement,
  OVERDUE_CHECK_EVERY_MS,
  type ReplacementCheckInput,
} from '../../../../functions/core/replacement/replacement-check.ts';
import { learnerGate, stuckLearners } from '../../../../functions/core/learners/stuck-learner.ts';
import type { Decision } from '../../../../functions/core/common/decision.ts';
import { id, policy, view, type MemberSpec } from '../fixtures.ts';

const REMOVED_AT = 1_000_000;
const WINDOW = 60_000;
const EVERY = 2_000;
const lab = policy({ replacement: { windowMs: WINDOW, checkEveryMs: EVERY }, stuckLearnerAfterMs: 10_000 });
// etcd-0 was removed from 0, 1, 2; etcd-3 is the replacement.
const before = [id(0), id(1), id(2)];
const healthy = (i: number): MemberSpec => ({ i, leader: 1 });

const input = (members: MemberSpec[], now: number, extra: Partial<ReplacementCheckInput> = {}): ReplacementCheckInput => ({
  view: view(now, members),
  removed: { memberId: id(0), memberName: 'etcd-0', at: REMOVED_AT },
  sizeBefore: 3,
  membersBefore: before,
  overdueSaid: false,
  now,
  policy: lab,
  ...extra,
});

describe('the replacement check', () => {
  it('is whole once the replacement joined, started, was promoted and answers: completed, with the time to replacement', () => {
    const verdict = checkReplacement(input([healthy(1), healthy(2), healthy(3)], REMOVED_AT + 42_000));
    expect(verdict).toMatchObject({
      kind: 'replaced',
      reason: 'REPLACEMENT_JOINED',
      replacedAfterMs: 42_000,
      evidence: { voting: 3, sizeBefore: 3, joined: [`etcd-3 (${id(3)})`] },
    });
    expect(verdict.message).toMatch(
      /^etcd-0 \(.+\) was removed at .+; etcd-3 \(.+\) joined in its place and the cluster is back to 3 voting members, every one started and answering: completed, 42 s after the removal\.$/,
    );
  });

  it.each([
    ['no replacement at all', [healthy(1), healthy(2)], /2 of its 3 voting members/],
    ['a learner that never started', [healthy(1), healthy(2), { i: 3, learner: true, unstarted: true }], /learner .+ added but never started/],
    ['a learner not promoted', [healthy(1), healthy(2), { i: 3, learner: true, leader: 1 }], /learner etcd-3 .+ not promoted yet/],
    ['a voting replacement that does not answer', [healthy(1), healthy(2), { i: 3, paths: 'refused' as const }], /etcd-3 .+ not answering healthy/],
  ] satisfies [string, MemberSpec[], RegExp][])('is short with %s: checked again checkEveryMs later, never past the window', (_, members, says) => {
    const verdict = checkReplacement(input(members, REMOVED_AT + 10_000));
    expect(verdict).toMatchObject({ kind: 'awaited', reason: 'REPLACEMENT_AWAITED', checkAt: REMOVED_AT + 10_000 + EVERY });
    expect(verdict.message).toMatch(says);
    expect(checkReplacement(input(members, REMOVED_AT + WINDOW - 500))).toMatchObject({ kind: 'awaited', checkAt: REMOVED_AT + WINDOW });
  });

  it('past the window is overdue: says which member went when, what the cluster has, what to check; then checks slower until a day later', () => {
    const now = REMOVED_AT + WINDOW;
    const verdict = checkReplacement(input([healthy(1), healthy(2)], now));
    expect(verdict).toMatchObject({ kind: 'overdue', reason: 'REPLACEMENT_OVERDUE', checkAt: now + OVERDUE_CHECK_EVERY_MS, evidence: { overdueSaid: false } });
    expect(verdict.message).toMatch(
      /etcd-0 .+ was removed at .+, 60 s ago, past the 60 s the policy allows .+replacement\.windowMs.+the cluster has 2 of its 3 voting members\. Check the replacement Machine and its kubeadm join/,
    );
    expect(verdict.message).toContain('the incident stays awaiting-replacement');
    const late = checkReplacement(input([healthy(1), healthy(2)], now + CHECKS_END_AFTER_OVERDUE_MS - 1_000, { overdueSaid: true }));
    expect(late).toMatchObject({ kind: 'overdue', checkAt: now + CHECKS_END_AFTER_OVERDUE_MS, evidence: { overdueSaid: true } });
    expect(checkReplacement(input([healthy(1), healthy(2)], now + CHECKS_END_AFTER_OVERDUE_MS))).toMatchObject({
      kind: 'ended',
      reason: 'REPLACEMENT_CHECKS_ENDED',
    });
  });

  it('still completes when the replacement comes after it was overdue', () => {
    expect(checkReplacement(input([healthy(1), healthy(2), healthy(3)], REMOVED_AT + 5 * WINDOW, { overdueSaid: true }))).toMatchObject({
      kind: 'replaced',
      replacedAfterMs: 5 * WINDOW,
    });
  });

  it('holds the size the removal record owes, not the size seen now', () => {
    expect(checkReplacement(input([healthy(1), healthy(2), healthy(3)], REMOVED_AT + 1_000, { sizeBefore: 4 }))).toMatchObject({
      kind: 'awaited',
      evidence: { short: ['3 of its 4 voting members'] },
    });
  });
});

describe('stuck learners', () => {
  const members: MemberSpec[] = [healthy(1), healthy(2), { i: 3, learner: true, unstarted: true }, { i: 4, learner: true, leader: 1 }];
  const v = view(0, members);

  it('are the learners first seen longer ago than stuckLearnerAfterMs, started or not; voting members never are', () => {
    const seen = { [id(3)]: 0, [id(4)]: 5_000, [id(1)]: 0 };
    expect(stuckLearners(v, seen, { now: 9_999, policy: lab })).toEqual([]);
    const stuck = stuckLearners(v, seen, { now: 10_000, policy: lab, owed: 'etcd-0' });
    expect(stuck.map((s) => [s.member.id, s.started])).toEqual([[id(3), false]]);
    expect(stuck[0]!.message).toMatch(
      new RegExp(
        `^Learner ${id(3)} \\(peer http://127.0.0.1:\\d+\\) was added and never started .+ first seen 10 s ago .+ past the 10 s the policy allows \\(stuckLearnerAfterMs\\), so it is removed, which costs no vote\\. The replacement for etcd-0 is still owed: the incident stays awaiting-replacement\\.$`,
      ),
    );
    expect(stuckLearners(v, seen, { now: 15_000, policy: lab }).map((s) => [s.member.name, s.started])).toEqual([
      ['', false],
      ['etcd-4', true],
    ]);
  });

  it('are never cleaned up with stuckLearnerAfterMs 0, nor before a learner was seen', () => {
    expect(stuckLearners(v, { [id(3)]: 0 }, { now: 1e12, policy: policy({ stuckLearnerAfterMs: 0 }) })).toEqual([]);
    expect(stuckLearners(v, {}, { now: 1e12, policy: lab })).toEqual([]);
  });
});

describe('the quorum gate refusing a removal for learners alone', () => {
  const refused: Decision = { kind: 'block', reason: 'MEMBER_NOT_READY', message: 'etcd-1 is not removed while learner x is in the cluster.', evidence: {} };
  const withLearner = view(0, [healthy(0), healthy(1), healthy(2), { i: 3, learner: true, unstarted: true }]);
  const ctx = (now: number) => ({ now, targetId: id(1), policy: lab });

  it('waits for the learner until stuckLearnerAfterMs since it was first seen, then cleans it up', () => {
    expect(learnerGate(refused, withLearner, { [id(3)]: 1_000 }, ctx(2_000))).toMatchObject({
      kind: 'wait',
      decision: { kind: 'retry', reason: 'LEARNER_PENDING', at: 11_000, reprobeNow: false, evidence: { learners: [id(3)] } },
    });
    const clean = learnerGate(refused, withLearner, { [id(3)]: 1_000 }, ctx(11_000));
    expect(clean?.kind === 'clean' && clean.stuck.map((s) => s.member.id)).toEqual([id(3)]);
  });

  it('leaves the refusal as it is for a voting member that never started, for any other block, and with stuckLearnerAfterMs 0', () => {
    const unstartedVoter = view(0, [healthy(0), healthy(1), healthy(2), { i: 3, unstarted: true }]);
    expect(learnerGate(refused, unstartedVoter, {}, ctx(1e9))).toBeUndefined();
    expect(learnerGate({ ...refused, reason: 'QUORUM_AT_RISK' }, withLearner, { [id(3)]: 0 }, ctx(1e9))).toBeUndefined();
    expect(learnerGate(refused, withLearner, { [id(3)]: 0 }, { ...ctx(1e9), policy: policy({ stuckLearnerAfterMs: 0 }) })).toBeUndefined();
  });
});
