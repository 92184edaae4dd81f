// A step failed on every delivery of its event (Lambda's retries, or the local bus's): the
// incident must not wait for an event that will never come. It resumes at its next attempt after
// the backoff, spending one, or, with the budget or the deadline spent, or no resume that could be
// written, it is blocked saying which step failed and how. The same rule, and the same words, on
// AWS (the functions' on-failure destination) and in the local runtime.
import type { Decision } from './decision.ts';
import { decidedBy } from './decided-by.ts';
import { describeDuration, describeTime, howReached } from './explain.ts';
import { pastIncidentDeadline } from './incident-deadline.ts';
import type { Policy } from './policy.ts';
import type { MemberView } from './view.ts';

/** What failed: the function, the event it was handed, the attempt it spoke for, and its last error. */
export interface FailedStep {
  functionName: string;
  detailType: string;
  attempt: number;
  error: string;
}

export interface StepFailedFacts {
  /** The incident's target as sentences name it, e.g. "etcd-1 (91bc3c398fb3c146)". */
  target: string;
  /** The target as the incident's newest view saw it: how it was reached. */
  lastSeen?: MemberView | undefined;
  openedAt: number;
  now: number;
  /** Attempts of the budget spent before this failure. */
  attemptsSpent: number;
  /** The incident's attempt now: a resume starts the next. */
  incidentAttempt: number;
  /** When a resume would run: the incident's backoff. */
  resumeAt: number;
  /** False once a resume was tried and could not be written. */
  resumable: boolean;
}

export function stepFailedDecision(step: FailedStep, facts: StepFailedFacts, policy: Pick<Policy, 'maxAttempts' | 'incidentDeadlineMs'>): Extract<Decision, { kind: 'retry' | 'block' }> {
  const failed = `failed on every delivery of ${step.detailType} (attempt ${step.attempt}): ${step.error}`;
  const evidence = { functionName: step.functionName, detailType: step.detailType, attempt: step.attempt, error: step.error };
  // The failed try spends an attempt: the budget is spent when it was the last one.
  const spent = facts.attemptsSpent + 1 >= policy.maxAttempts;
  const late = pastIncidentDeadline(facts.openedAt, facts.now, policy);
  if (!spent && !late && facts.resumable) {
    return decidedBy(
      {
        kind: 'retry',
        at: facts.resumeAt,
        reprobeNow: false,
        reason: 'STEP_FAILED',
        message: `${step.functionName} ${failed}; resumed at attempt ${facts.incidentAttempt + 1} at ${describeTime(facts.resumeAt)}`,
        evidence,
      },
      'step-failed',
    );
  }
  // Which member, and how it was last reached: every outcome names both.
  const about = facts.lastSeen ? `${facts.target}, which ${howReached(facts.lastSeen)},` : facts.target;
  const since = late ? `the incident deadline of ${describeDuration(policy.incidentDeadlineMs)} has passed` : spent ? `the attempt budget of ${policy.maxAttempts} is spent` : 'it could not be scheduled again';
  return decidedBy(
    {
      kind: 'block',
      reason: 'STEP_FAILED',
      message: `The ${step.functionName} step for ${about} ${failed}; blocked, since ${since}. Nothing more was done; fix the cause, then report the member again.`,
      evidence,
    },
    'step-failed',
  );
}
