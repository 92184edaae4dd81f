// The seed case timed the same way on the deployed-stack sim and on the local embedded runtime:
// a 3-member lab with its leader's client path cut, reported unhealthy, removed without a move;
// the figure is from the report (on AWS: the bus accepting MemberUnhealthy, not the reporter's
// SDK client getting ready; locally: the submit) to the leader-elected step of remediate's
// journal (when it saw the new leader stand, not when a caller polled). Shared by the AWS
// seed-case test and demo:aws.
import { waitFor } from '../../../functions/lib/wait-for.ts';
import type { PolicyInput } from '../../../functions/core/policy/policy.ts';
import type { TerminalEvent } from '../../../infra/runtime/runtime.ts';
import type { Lab, LabMember } from '../../../infra/lab/lab.ts';
import { startPipeline } from '../../integration/e2e/pipeline.ts';
import type { AcceptedEvent } from '../fakes/eventbridge-fake.ts';
import type { DeployedStack } from './deployed-stack.ts';
import { registerLab, reportUnhealthy } from './lab-on-stack.ts';

export const SEED_GRACE_MS = 3_000;
export const SEED_ELECTION_MS = 500;
export const seedPolicy: PolicyInput = {
  graceMs: SEED_GRACE_MS,
  electionTimeoutMs: SEED_ELECTION_MS,
  callTimeoutMs: 1_000,
  backoff: { baseMs: 200, capMs: 1_000 },
  maxAttempts: 60,
};
/** The bound: grace + 2 × election timeout + 1 s. */
export const SEED_BOUND_MS = SEED_GRACE_MS + 2 * SEED_ELECTION_MS + 1_000;

/** The leader-elected step of a RemediationCompleted's timeline, in epoch ms. */
export function leaderElectedAt(detail: unknown): number {
  const step = (detail as { timeline?: { step: string; at: string }[] }).timeline?.find((e) => e.step === 'leader-elected');
  if (!step) throw new Error('the completion has no leader-elected step');
  return Date.parse(step.at);
}

export interface StackRun {
  leader: LabMember;
  completed: AcceptedEvent;
  tookMs: number;
  /** Where this run's events start in stack.eventBridge.accepted, for counting one incident. */
  acceptedFrom: number;
  invokedFrom: number;
}

/** The leader of a fresh lab cut, the lab registered as `clusterId`, the leader reported: until RemediationCompleted. */
export async function seedCaseOnStack(
  stack: DeployedStack,
  lab: Lab,
  clusterId = 'lab',
  timeoutMs = 60_000,
  policy: PolicyInput = seedPolicy,
): Promise<StackRun> {
  const leader = await lab.leader();
  await lab.fault(leader.name, 'cut');
  await registerLab(stack, lab, policy, clusterId);
  const acceptedFrom = stack.eventBridge.accepted.length;
  const invokedFrom = stack.invocations.length;
  const failed = await reportUnhealthy(stack, leader.name, clusterId);
  if (failed !== 0) throw new Error(`MemberUnhealthy was not accepted (${failed} failed entries)`);
  const reported = stack.eventBridge.accepted
    .slice(acceptedFrom)
    .find((e) => e.event['detail-type'] === 'MemberUnhealthy' && (e.event.detail as { clusterId?: string }).clusterId === clusterId);
  if (!reported) throw new Error('MemberUnhealthy is not among the events the bus accepted');
  const started = reported.acceptedAt;
  const completed = await waitFor(
    async () =>
      stack.eventBridge.accepted
        .slice(acceptedFrom)
        .find((e) => e.event['detail-type'] === 'RemediationCompleted' && (e.event.detail as { clusterId?: string }).clusterId === clusterId),
    { timeoutMs, what: 'RemediationCompleted on the bus' },
  );
  return { leader, completed, tookMs: leaderElectedAt(completed.event.detail) - started, acceptedFrom, invokedFrom };
}

/** The same on the local embedded runtime (the four handlers in process, the sqlite store). */
export async function seedCaseLocal(lab: Lab): Promise<{ leader: LabMember; outcome: TerminalEvent; tookMs: number }> {
  const leader = await lab.leader();
  await lab.fault(leader.name, 'cut');
  const pipeline = await startPipeline(lab, { policy: seedPolicy });
  try {
    const started = Date.now();
    const outcome = await pipeline.remediate(leader.name, 60_000);
    if (outcome.detailType !== 'RemediationCompleted')
      throw new Error(`the local seed case ended ${outcome.detailType}: ${JSON.stringify(outcome.detail).slice(0, 300)}`);
    return { leader, outcome, tookMs: leaderElectedAt(outcome.detail) - started };
  } finally {
    await pipeline.close();
  }
}

export { median } from '../../../functions/core/common/collections.ts';
