// TARGET_NOT_FOUND is decided by one core check, a missing target is never approved as a learner,
// and the leader-move label an outcome carries comes from one rule.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../../functions/core/common/decision.ts';
import type { JournalEntry, JournalLine } from '../../../../functions/core/incident/journal.ts';
import { leaderMoveOf } from '../../../../functions/core/move/leader-move.ts';
import { checkTargetFound } from '../../../../functions/core/plan/plan-checks.ts';
import { buildPlanContext } from '../../../../functions/core/plan/plan-context.ts';
import { decideLeadership } from '../../../../functions/core/plan/plan-leadership.ts';
import { plan, type PlanInput } from '../../../../functions/core/plan/plan.ts';
import { moveMadeLine, sampleLine } from '../../../support/journal-lines.ts';
import { cluster, fixedRandom, id, policy, view } from '../fixtures.ts';

const T0 = 600_000;
const input = (targetId: string): PlanInput => ({
  samples: [cluster(T0, 3, { leader: 0 })],
  targetId,
  incident: { openedAt: T0, attempt: 0, immediateReprobes: 0 },
  remediation: { retryCount: 0 },
  policy: policy(),
  now: T0,
  random: fixedRandom(0.5),
});

describe('checkTargetFound', () => {
  const listed = cluster(T0, 3);
  const selector = { described: 'memberName etcd-9' };

  it('passes when no member list answered: nothing is known, the planner retries', () => {
    expect(checkTargetFound(undefined, selector, {})).toBe('pass');
    expect(checkTargetFound(view(T0, []), selector, {})).toBe('pass');
  });

  it('passes for a member in the list', () => {
    expect(checkTargetFound(listed, { memberId: id(1), described: 'memberId x' }, {})).toBe('pass');
  });

  it('blocks a selector that matched no member, naming it and the members', () => {
    expect(checkTargetFound(listed, selector, { target: { memberName: 'etcd-9' } })).toEqual({
      kind: 'block',
      reason: 'TARGET_NOT_FOUND',
      message:
        'No etcd member matches memberName etcd-9 (members: etcd-0, which answers on direct http://127.0.0.1:4001; etcd-1, which answers on direct http://127.0.0.1:4011; etcd-2, which answers on direct http://127.0.0.1:4021); blocked, it may already be removed: check the member list.',
      evidence: { target: { memberName: 'etcd-9' }, members: 'etcd-0, etcd-1, etcd-2' },
    });
  });

  it('is the check plan() runs for a member id no longer in the list', () => {
    const d = plan(input('deadbeef'));
    expect(d).toMatchObject({ kind: 'block', reason: 'TARGET_NOT_FOUND', evidence: { decidedBy: 'target-found', members: 'etcd-0, etcd-1, etcd-2' } });
    expect(d.message).toBe(
      'No etcd member matches memberId deadbeef (members: etcd-0, which answers on direct http://127.0.0.1:4001; etcd-1, which answers on direct http://127.0.0.1:4011; etcd-2, which answers on direct http://127.0.0.1:4021); blocked, it may already be removed: check the member list.',
    );
  });
});

describe('decideLeadership without a target', () => {
  it('blocks as TARGET_NOT_FOUND, never approving it as a learner', () => {
    const d = decideLeadership(buildPlanContext(input('deadbeef')));
    expect(d).toMatchObject({ kind: 'block', reason: 'TARGET_NOT_FOUND' });
  });

  it('still approves a learner as a learner', () => {
    const i = {
      ...input(id(3)),
      samples: [
        view(T0, [
          { i: 0, leader: 0 },
          { i: 1, leader: 0 },
          { i: 2, leader: 0 },
          { i: 3, learner: true, leader: 0 },
        ]),
      ],
    };
    expect(decideLeadership(buildPlanContext(i))).toMatchObject({ kind: 'approve', reason: 'TARGET_IS_LEARNER', leaderMove: 'not-needed' });
  });
});

describe('leaderMoveOf', () => {
  const approve = (leaderMove: 'moved' | 'not-needed' | 'skipped'): Decision => ({
    kind: 'approve',
    leaderMove,
    reason: 'TARGET_IS_FOLLOWER',
    message: 'm.',
    evidence: {},
  });
  const block: Decision = { kind: 'block', reason: 'NO_QUORUM', message: 'm.', evidence: {} };
  const line = (written: JournalLine, isStepMarker = false): JournalEntry => ({ at: 0, ...written, isStepMarker });
  const retried = line({ step: 'move-leader:retry', detail: { reason: 'LEADER_UNREACHABLE', message: 'm.' } });
  const moved = [retried, line(sampleLine('leader-moved'))];

  it('says moved once a move is journaled, whatever was approved after it', () => {
    expect(leaderMoveOf(moved, approve('not-needed'))).toBe('moved');
    expect(leaderMoveOf(moved, block)).toBe('moved');
  });

  it('says moved for a move marked made whose commit a crash cut off, before its journal line', () => {
    const cut = [line(sampleLine('probed')), line(moveMadeLine(0), true), line(sampleLine('resumed'))];
    expect(leaderMoveOf(cut, approve('not-needed'))).toBe('moved');
  });

  it('otherwise takes the label of the approval', () => {
    expect(leaderMoveOf([], approve('skipped'))).toBe('skipped');
    expect(leaderMoveOf([line(sampleLine('member-removed'), true)], approve('not-needed'))).toBe('not-needed');
  });

  it('with no move and no approval, says nothing was done to leadership', () => {
    expect(leaderMoveOf([], block)).toBe('not-needed');
    expect(leaderMoveOf([], undefined)).toBe('not-needed');
  });
});
