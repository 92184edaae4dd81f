// remediate's rules, table-driven: each decides one thing the steps used to decide inline, and
// names itself in evidence.decidedBy.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../../functions/core/common/decision.ts';
import { asDryRun, dryRunSinceApproval } from '../../../../functions/core/policy/dry-run.ts';
import { guardFailureDecision, type GuardAction } from '../../../../functions/core/removal/guard-failure.ts';
import { afterFailedRemove, everyMemberFailed, removalFailed, type FailedRemove } from '../../../../functions/core/removal/member-removal.ts';
import { actuatorFailed, clusterLocked, gatesUnderLock, noLeaderAfterRemoval } from '../../../../functions/core/removal/remediation-steps.ts';
import { snapshotFailed } from '../../../../functions/core/removal/snapshot-steps.ts';
import { backoffRetryAt } from '../../../../functions/core/waits/retry-after-backoff.ts';
import { failureOf, policy } from '../fixtures.ts';

const T = Date.parse('2026-01-01T00:00:00Z');
const at = T + 1_500;
const when = '2026-01-01T00:00:01.500Z';

describe('the rules remediate applies, each with its name', () => {
  const move: Decision = {
    kind: 'move-leader',
    leaderId: 'a',
    candidates: ['b'],
    paths: ['direct'],
    reason: 'LEADER_MOVE_REQUIRED',
    message: 'etcd-1 leads.',
    evidence: { decidedBy: 'leadership' },
  };
  const approve: Decision = {
    kind: 'approve',
    leaderMove: 'not-needed',
    reason: 'TARGET_IS_FOLLOWER',
    message: 'etcd-1 is a follower.',
    evidence: { decidedBy: 'leadership' },
  };
  it.each<{ rule: string; decision: Decision | { reason: string; message: string; evidence: Record<string, unknown> }; want: Record<string, unknown> }>([
    {
      rule: 'cluster-lock',
      decision: clusterLocked('etcd-1 (a)', 'c1', 'incident i2 holds the lock', at),
      want: {
        kind: 'retry',
        at,
        reprobeNow: false,
        reason: 'CLUSTER_LOCKED',
        message: `etcd-1 (a) waits: in cluster c1, incident i2 holds the lock; nothing was removed, we try again at ${when}.`,
      },
    },
    {
      rule: 'snapshot-before-remove',
      decision: snapshotFailed('etcd-1', { kind: 'no-store' }, { earlierTransient: 0, retryAt: at }),
      want: {
        kind: 'block',
        reason: 'SNAPSHOT_FAILED',
        message: expect.stringMatching(/^No snapshot could be taken before removing etcd-1: no snapshot store is configured; nothing was removed; blocked\./),
      },
    },
    {
      rule: 'leads-again',
      decision: gatesUnderLock(move, T),
      want: {
        kind: 'retry',
        at: T,
        reprobeNow: true,
        reason: 'LEADER_CHANGED',
        message: 'etcd-1 leads; the target leads again since approval, so we re-probe now.',
      },
    },
    {
      rule: 'leader-after-removal',
      decision: noLeaderAfterRemoval('etcd-1 (a)', { now: T, openedAt: T, before: 0 }, policy({ electionTimeoutMs: 1_500 })),
      want: {
        kind: 'retry',
        at,
        reason: 'ELECTION_IN_PROGRESS',
        message: `etcd-1 (a) was removed, but the remaining members agree on no leader yet; we look again after one election timeout, at ${when}.`,
        evidence: { waitsInARow: 1 },
      },
    },
    {
      rule: 'actuator',
      decision: actuatorFailed({ id: 'a', name: 'etcd-1' }, { id: 'b', name: 'etcd-2' }, 'cluster-api', 'Machine is being deleted'),
      want: {
        reason: 'ACTUATOR_FAILED',
        message:
          'etcd-1 (a) is out of etcd and etcd-2 leads now, but the cluster-api actuator could not replace its machine (Machine is being deleted); replace the machine by hand.',
      },
    },
    {
      rule: 'dry-run',
      decision: dryRunSinceApproval('etcd-1 (a)', 'c1'),
      want: { kind: 'block', reason: 'DRY_RUN', evidence: { wouldDo: 'approve', decidedBy: 'dry-run' } },
    },
    {
      rule: 'dry-run',
      decision: asDryRun(approve),
      want: { kind: 'block', reason: 'DRY_RUN', message: 'Dry run, nothing done: etcd-1 is a follower.', evidence: { wouldDo: 'approve' } },
    },
    { rule: 'dry-run', decision: asDryRun(move), want: { kind: 'block', reason: 'DRY_RUN', evidence: { wouldDo: 'move-leader' } } },
  ])('$rule: $want.reason', ({ rule, decision, want }) => {
    expect(decision).toMatchObject(want);
    expect(decision.evidence.decidedBy).toBe(rule);
  });

  it('the gates under the lock: any verdict but a move stands as the planner gave it', () => {
    expect(gatesUnderLock(approve, T)).toBe(approve);
  });

  it('a dry run leaves a wait, a block or a close as it is', () => {
    const wait: Decision = { kind: 'retry', at, reprobeNow: false, reason: 'ELECTION_IN_PROGRESS', message: 'm.', evidence: {} };
    expect(asDryRun(wait)).toBe(wait);
  });
});

describe('MemberRemove: each refusal, and every member tried', () => {
  const call = (failure: FailedRemove['failure'], via = 'etcd-2 (b)'): FailedRemove => ({ via, path: 'direct', endpoint: 'http://127.0.0.1:4021', failure });
  const said = (failure: FailedRemove['failure'], via = 'etcd-2 (b)') => `${via} over direct http://127.0.0.1:4021: ${failure.message}`;
  const notFound = { kind: 'other' as const, grpcCode: 5, message: 'etcdserver: member not found' };
  const unhealthy = { kind: 'other' as const, grpcCode: 2, message: 'etcdserver: unhealthy cluster' };
  const notStarted = { kind: 'other' as const, grpcCode: 9, message: 'etcdserver: re-configuration failed due to not enough started members' };

  it.each([
    { what: 'member not found: already gone, which counts as done', failure: notFound, want: { kind: 'removed', alreadyGone: true, via: said(notFound) } },
    {
      what: 'not enough started members: blocked',
      failure: notStarted,
      want: { kind: 'block', reason: 'NOT_ENOUGH_STARTED_MEMBERS', failures: [said(notStarted)] },
    },
    {
      what: 'unhealthy cluster: every member would say so, back off',
      failure: unhealthy,
      want: { kind: 'retry', reason: 'ETCD_TRANSIENT', message: `etcd refused removing etcd-1 through ${said(unhealthy)}` },
    },
    { what: 'refused: the next path of the same member', failure: failureOf('refused'), want: 'next-path' },
  ])('$what', ({ failure, want }) => {
    const verdict = afterFailedRemove('etcd-1', [call(failure)]);
    if (typeof want === 'string') expect(verdict).toBe(want);
    else expect(verdict).toMatchObject(want);
  });

  it.each([
    {
      what: 'no member to ask',
      calls: [],
      want: { kind: 'retry', reason: 'NO_HEALTHY_MEMBER', message: 'No healthy member is left to remove etcd-1 through', failures: [] },
    },
    {
      what: 'every member refused the connection: the last failure says why',
      calls: [call(failureOf('refused')), call(failureOf('timeout'), 'etcd-3 (c)')],
      want: {
        kind: 'retry',
        reason: 'PATH_TIMEOUT',
        message: `Removing etcd-1 failed on every healthy member (${said(failureOf('refused'))}; ${said(failureOf('timeout'), 'etcd-3 (c)')})`,
      },
    },
    {
      what: 'every member refused our credentials: blocked',
      calls: [call(failureOf('auth')), call(failureOf('auth'), 'etcd-3 (c)')],
      want: { kind: 'block', reason: 'AUTH_FAILED' },
    },
  ])('$what', ({ calls, want }) => {
    expect(everyMemberFailed('etcd-1', calls)).toMatchObject(want);
  });

  it.each([
    {
      failure: { kind: 'retry' as const, reason: 'NO_HEALTHY_MEMBER' as const, message: 'No healthy member is left to remove etcd-1 through', failures: [] },
      want: { kind: 'retry', at, message: `No healthy member is left to remove etcd-1 through; we try again at ${when}.` },
    },
    {
      failure: { kind: 'block' as const, reason: 'NOT_ENOUGH_STARTED_MEMBERS' as const, message: 'Removing etcd-1 was refused; blocked.', failures: ['x'] },
      want: { kind: 'block', message: 'Removing etcd-1 was refused; blocked.', evidence: { failures: ['x'] } },
    },
  ])('the decision on a removal that did not happen: $want.kind', ({ failure, want }) => {
    const decision = removalFailed(failure, at);
    expect(decision).toMatchObject({ reason: failure.reason, ...want });
    expect(decision.evidence.decidedBy).toBe('member-remove');
  });
});

describe('the guard failing: decided by the lock or the record it was asked for', () => {
  it.each<{ action: GuardAction; rule: string }>([
    { action: 'take the cluster lock', rule: 'cluster-lock' },
    { action: 'read the removal record', rule: 'removal-record' },
    { action: 'write the removal record', rule: 'removal-record' },
  ])('$action: $rule', ({ action, rule }) => {
    const ctx = { who: 'etcd-1 (a)', clusterId: 'c1', where: 'etcd key /etcd-remediator/lock', retryAt: at };
    for (const failure of [failureOf('timeout'), failureOf('auth'), { kind: 'other' as const, message: 'etcdserver: mvcc: database space exceeded' }]) {
      expect(guardFailureDecision(action, failure, ctx).evidence.decidedBy).toBe(rule);
    }
  });
});

describe('the one backoff', () => {
  it.each([
    { attempt: 0, random: 0.5, want: T + 100 },
    { attempt: 2, random: 0.5, want: T + 400 },
    { attempt: 10, random: 0.999, want: T + 999 },
  ])('attempt $attempt, random $random: now + full jitter of min(cap, base * 2^attempt)', ({ attempt, random, want }) => {
    expect(backoffRetryAt({ now: T, attempt, policy: { backoff: { baseMs: 200, capMs: 1_000 } }, random: () => random })).toBe(want);
  });
});
