// A step failed on every delivery of its event (Lambda's retries, or the local bus's): the
// incident must not wait for an event that will never come. It resumes at its next attempt after
// the backoff, spending one, or, with the budget or the deadline spent, or no resume that could be
// written, it is blocked saying which step failed and how. The same rule, and the same words, on
// AWS (the functions' on-failure destination) and in the local runtime.
import { type Decision, decidedBy } from '../common/index.ts';
import { describeDuration, describeTime, howReached, type MemberView } from '../view/index.ts';
import { pastIncidentDeadline } from '../waits/index.ts';
import type { Policy } from '../policy/index.ts';

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
  /** The directory refused the cluster's entry (its error says why): there is no policy to resume under. */
  entryUnread?: true;
}

export function stepFailedDecision(
  step: FailedStep,
  facts: StepFailedFacts,
  policy: Pick<Policy, 'maxAttempts' | 'incidentDeadlineMs'>,
): Extract<Decision, { kind: 'retry' | 'block' }> {
  if (!resumable(facts, policy)) return stepFailedBlock(step, facts, policy);
  return decidedBy(
    {
      kind: 'retry',
      at: facts.resumeAt,
      reprobeNow: false,
      reason: 'STEP_FAILED',
      message: `${step.functionName} ${failedOn(step)}; resumed at attempt ${facts.incidentAttempt + 1} at ${describeTime(facts.resumeAt)}`,
      evidence: evidenceOf(step),
    },
    'step-failed',
  );
}

/** The failed try spends an attempt: the budget is spent when it was the last one. */
const budgetSpent = (facts: StepFailedFacts, policy: Pick<Policy, 'maxAttempts'>): boolean => facts.attemptsSpent + 1 >= policy.maxAttempts;

const resumable = (facts: StepFailedFacts, policy: Pick<Policy, 'maxAttempts' | 'incidentDeadlineMs'>): boolean =>
  facts.resumable && !budgetSpent(facts, policy) && !pastIncidentDeadline(facts.openedAt, facts.now, policy);

const failedOn = (step: FailedStep): string => `failed on every delivery of ${step.detailType} (attempt ${step.attempt}): ${step.error}`;

const evidenceOf = (step: FailedStep) => ({ functionName: step.functionName, detailType: step.detailType, attempt: step.attempt, error: step.error });

/** The block, saying why no resume: the deadline, the budget, or a resume that could not be written. */
export function stepFailedBlock(
  step: FailedStep,
  facts: StepFailedFacts,
  policy: Pick<Policy, 'maxAttempts' | 'incidentDeadlineMs'>,
): Extract<Decision, { kind: 'block' }> {
  const since = facts.entryUnread
    ? "the cluster's directory entry is refused"
    : pastIncidentDeadline(facts.openedAt, facts.now, policy)
      ? `the incident deadline of ${describeDuration(policy.incidentDeadlineMs)} has passed`
      : budgetSpent(facts, policy)
        ? `the attempt budget of ${policy.maxAttempts} is spent`
        : 'it could not be scheduled again';
  // Which member, and how it was last reached: every outcome names both.
  const about = facts.lastSeen ? `${facts.target}, which ${howReached(facts.lastSeen)},` : facts.target;
  return decidedBy(
    {
      kind: 'block',
      reason: 'STEP_FAILED',
      message: `The ${step.functionName} step for ${about} ${failedOn(step)}; blocked, since ${since}. Nothing more was done; fix the cause, then report the member again.`,
      evidence: evidenceOf(step),
    },
    'step-failed',
  );
}
