// A journal line of each step, with fields as its step writes them, for tests that need a line and
// do not care which words it holds.
import { journalSteps, moveMadeStep, type JournalDetails, type JournalLine, type MoveMadeLine, type NamedStep } from '../../functions/core/incident/journal.ts';

export const sampleDetails: { [S in NamedStep]: JournalDetails[S] } = {
  [journalSteps.incidentOpened]: { source: 'cli', targetKey: 'memberName=etcd-0', reason: 'disk failing', observedAt: '2025-06-01T12:00:00.000Z' },
  [journalSteps.duplicateJoined]: { source: 'cli', reason: 'disk failing' },
  [journalSteps.lateDuplicate]: { source: 'cli', reason: 'disk failing', observedAt: '2025-06-01T12:00:00.000Z' },
  [journalSteps.probed]: {
    answered: 3,
    members: 3,
    leader: 'agreed',
    leaderName: 'etcd-0',
    listFailures: [],
    seen: [
      { memberId: '8e9e05c52164694d', name: 'etcd-0', path: 'direct', leaderId: '8e9e05c52164694d', term: 2 },
      { memberId: '91bc3c398fb3c146', name: 'etcd-1', path: 'direct', leaderId: '8e9e05c52164694d', term: 2 },
      { memberId: 'fd422379fda50e48', name: 'etcd-2', path: 'direct', leaderId: '8e9e05c52164694d', term: 2 },
    ],
  },
  [journalSteps.retryScheduled]: { attempt: 2, at: '2025-06-01T12:00:05.000Z', reason: 'LEADER_UNREACHABLE' },
  [journalSteps.resumed]: { attempt: 3, at: '2025-06-01T12:00:09.000Z', reason: 'RUNTIME_RESUMED' },
  [journalSteps.stepFailed]: {
    functionName: 'remediate',
    detailType: 'RemediationApproved',
    attempt: 1,
    error: 'boom',
    resumedAttempt: 2,
    at: '2025-06-01T12:00:07.000Z',
  },
  [journalSteps.leaderMoved]: {
    from: '8e9e05c52164694d',
    to: '91bc3c398fb3c146',
    path: 'direct',
    tookMs: 54,
    message: 'Leadership moved from etcd-0 to etcd-1.',
  },
  [journalSteps.lockTaken]: { owner: 'host:1', where: 'etcd /etcd-remediator/lock/c1' },
  [journalSteps.lockReleased]: { owner: 'host:1', where: 'etcd /etcd-remediator/lock/c1' },
  [journalSteps.snapshotTaken]: {
    location: '/tmp/snap.db',
    via: 'etcd-1 (91bc3c398fb3c146) over direct',
    bytes: 20_512,
    sha256: 'a3f1c6e9b2d4f7081a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081',
    tookMs: 41,
  },
  [journalSteps.snapshotFailed]: {
    problem: 'the snapshot store directory /var/lib/x refused it: ENOSPC: no space left on device',
    required: false,
    transient: false,
  },
  [journalSteps.memberRemoved]: { via: 'etcd-1 (91bc3c398fb3c146) over direct http://127.0.0.1:4001', alreadyGone: false },
  [journalSteps.leaderElected]: { id: '91bc3c398fb3c146', name: 'etcd-1', term: 3, afterRemovalMs: 930 },
  [journalSteps.actuatorCalled]: { actuator: 'etcd-only', said: 'nothing to replace' },
  [journalSteps.replacementChecked]: { reason: 'REPLACEMENT_OVERDUE', message: 'etcd-0 (8e9e05c52164694d) was removed 30m ago and no replacement has joined.' },
  [journalSteps.learnerSeen]: { memberId: '2b9f1d3c4e5a6f70', peerURLs: ['http://127.0.0.1:2480'] },
  [journalSteps.learnerRemoved]: {
    memberId: '2b9f1d3c4e5a6f70',
    via: 'etcd-1 (91bc3c398fb3c146) over direct',
    message: 'Learner 2b9f1d3c4e5a6f70 was added and never started.',
  },
};

/** A line of `step`, with sample fields. */
export const sampleLine = <S extends NamedStep>(step: S): Extract<JournalLine, { step: S }> =>
  ({ step, detail: sampleDetails[step] }) as Extract<JournalLine, { step: S }>;

/** The marker move-leader writes at `attempt` once a move is made. */
export const moveMadeLine = (attempt: number): MoveMadeLine => ({
  step: moveMadeStep(attempt),
  detail: { decision: { kind: 'approve', leaderMove: 'moved', reason: 'LEADER_MOVED', message: 'Leadership moved from etcd-0 to etcd-1.', evidence: {} } },
});
