// STEP_FAILED and the incident deadline, table-driven: one rule for the local runtime and AWS.
import { describe, expect, it } from 'vitest';
import { pastIncidentDeadline, stalledPastDeadline } from '../../../../functions/core/waits/incident-deadline.ts';
import { resumeAfterRemoval } from '../../../../functions/core/removal/resume-after-removal.ts';
import { stepFailedDecision, type StepFailedFacts } from '../../../../functions/core/incident/step-failed.ts';
import { view } from '../fixtures.ts';

const T = Date.parse('2026-01-01T00:00:00Z');
const policy = { maxAttempts: 5, incidentDeadlineMs: 600_000 };

describe('pastIncidentDeadline', () => {
  it.each([
    { open: 0, past: false },
    { open: 599_999, past: false },
    { open: 600_000, past: true },
    { open: 3_600_000, past: true },
  ])('open $open ms: past $past', ({ open, past }) => expect(pastIncidentDeadline(T - open, T, policy)).toBe(past));
});

describe('stepFailedDecision', () => {
  const step = { functionName: 'remediate', detailType: 'RemediationApproved', attempt: 3, error: 'Runtime.ExitError: the container exited' };
  const facts = (over: Partial<StepFailedFacts> = {}): StepFailedFacts => ({
    target: 'etcd-1 (a)',
    openedAt: T - 60_000,
    now: T,
    attemptsSpent: 1,
    incidentAttempt: 3,
    resumeAt: T + 400,
    resumable: true,
    ...over,
  });
  const failed = 'failed on every delivery of RemediationApproved (attempt 3): Runtime.ExitError: the container exited';
  it.each<{ what: string; over: Partial<StepFailedFacts>; kind: 'retry' | 'block'; message: string }>([
    {
      what: 'budget and time left: resumed at the next attempt',
      over: {},
      kind: 'retry',
      message: `remediate ${failed}; resumed at attempt 4 at 2026-01-01T00:00:00.400Z`,
    },
    {
      what: 'the last attempt of the budget',
      over: { attemptsSpent: 4 },
      kind: 'block',
      message: `The remediate step for etcd-1 (a) ${failed}; blocked, since the attempt budget of 5 is spent. Nothing more was done; fix the cause, then report the member again.`,
    },
    {
      what: 'past the deadline',
      over: { openedAt: T - 600_000 },
      kind: 'block',
      message: `The remediate step for etcd-1 (a) ${failed}; blocked, since the incident deadline of 10 min has passed. Nothing more was done; fix the cause, then report the member again.`,
    },
    {
      what: 'the resume could not be written',
      over: { resumable: false },
      kind: 'block',
      message: `The remediate step for etcd-1 (a) ${failed}; blocked, since it could not be scheduled again. Nothing more was done; fix the cause, then report the member again.`,
    },
  ])('$what', ({ over, kind, message }) => {
    const decision = stepFailedDecision(step, facts(over), policy);
    expect(decision).toMatchObject({ kind, reason: 'STEP_FAILED', message, evidence: { ...step, decidedBy: 'step-failed' } });
    if (decision.kind === 'retry') expect(decision).toMatchObject({ at: T + 400, reprobeNow: false });
  });

  it('a block names the member and how the newest view reached it', () => {
    const lastSeen = view(T, [
      { i: 0, leader: 0 },
      { i: 1, leader: 0 },
      { i: 2, leader: 0 },
    ]).members[1]!;
    const decision = stepFailedDecision(step, facts({ target: 'etcd-1 (91bc3c398fb3c146)', lastSeen, attemptsSpent: 4 }), policy);
    expect(decision.message).toMatch(
      /^The remediate step for etcd-1 \(91bc3c398fb3c146\), which answers on direct http:\/\/127\.0\.0\.1:4011, failed on every delivery of RemediationApproved \(attempt 3\)/,
    );
  });
});

describe('resumeAfterRemoval and the stalled sweep', () => {
  const retry = { kind: 'retry' as const, at: T, reprobeNow: false, reason: 'ELECTION_IN_PROGRESS' as const, message: 'No leader yet.', evidence: {} };
  const approved = {
    kind: 'approve' as const,
    leaderMove: 'skipped' as const,
    reason: 'LEADER_UNREACHABLE_PAST_GRACE' as const,
    message: 'Approved.',
    evidence: {},
  };
  it.each([
    {
      what: 'within the deadline: resumes, with the label of the approval',
      open: 60_000,
      last: approved,
      want: { kind: 'approve', leaderMove: 'skipped', evidence: { lastReason: 'LEADER_UNREACHABLE_PAST_GRACE' } },
    },
    {
      what: 'past it: blocked, with the last decision said',
      open: 600_000,
      last: retry,
      want: {
        kind: 'block',
        reason: 'INCIDENT_DEADLINE_EXCEEDED',
        message:
          'etcd-1 (a) is out of the member list, but remediation has not finished within the incident deadline of 10 min (last: No leader yet); blocked, check that the remaining members have a leader and replace the machine by hand.',
        evidence: { lastReason: 'ELECTION_IN_PROGRESS' },
      },
    },
  ])('$what', ({ open, last, want }) => {
    const decision = resumeAfterRemoval({ who: 'etcd-1 (a)', openedAt: T - open, now: T, lastDecision: last, journal: [] }, policy);
    expect(decision).toMatchObject({ ...want, evidence: { ...want.evidence, resumed: true, decidedBy: 'resume-after-removal' } });
  });

  it('no approval journaled: resumed as RUNTIME_RESUMED', () => {
    expect(resumeAfterRemoval({ who: 'etcd-1 (a)', openedAt: T, now: T, journal: [] }, policy)).toMatchObject({
      kind: 'approve',
      reason: 'RUNTIME_RESUMED',
      leaderMove: 'not-needed',
    });
  });

  it('a stalled incident past its deadline is blocked saying since when', () => {
    expect(stalledPastDeadline({ incidentId: 'i1', name: 'etcd-1', updatedAt: T - 120_000, attempt: 7 }, policy)).toEqual({
      kind: 'block',
      reason: 'INCIDENT_DEADLINE_EXCEEDED',
      message:
        'Incident i1 (etcd-1) made no progress since 2025-12-31T23:58:00.000Z and is past its deadline of 10 min; blocked, nothing more is done: check the dead-letter queues and the logs for the step that kept failing, then report the member again.',
      evidence: { stalledSince: '2025-12-31T23:58:00.000Z', attempt: 7, decidedBy: 'stalled-past-deadline' },
    });
  });
});
