// Case 21: faults in the AWS wiring (PutEvents partly failing, DynamoDB write conflicts, a function
// process killed mid-step). Each row runs the synthesized stack as deployed (aws-wiring.ts) on the
// lab, the embedded pipeline left idle, and ends with the sick member removed exactly once. Each
// row also proves its fault struck: a fault that was never injected fails the row.
import { waitFor } from '../../functions/lib/wait-for.ts';
import { startLab, type LabMember } from '../../infra/lab/lab.ts';
import { removalsRecorded } from '../support/aws-sim/lab-on-stack.ts';
import type { DynamoExchange } from '../support/dynalite.ts';
import { startAwsWiring, synthOnce, type AwsWiring } from './aws-wiring.ts';
import { check, says, type CaseContext, type Checked, type MatrixCase, type StartedCluster } from './harness.ts';
import { followersOf, membershipIs, removedWithNewLeader } from './lab-checks.ts';

const TIMEOUT_MS = 60_000;

const wiringOf = (ctx: CaseContext): AwsWiring => {
  const found = ctx.others.find((o): o is AwsWiring => 'stack' in o);
  if (!found) throw new Error('the case never started the AWS wiring');
  return found;
};

/** What every row of case 21 must show: the member replaced once, through the stack alone, and said so. */
async function replacedOnce(ctx: CaseContext, { outcomes, deciding }: Checked): Promise<string[]> {
  const target = ctx.arranged.targets[0]!;
  const wiring = wiringOf(ctx);
  const o = outcomes[0]!;
  const incidents = await wiring.store.listIncidents({ clusterId: 'lab' });
  const journal = incidents[0] ? await wiring.store.journal(incidents[0].incidentId) : [];
  const records = await removalsRecorded(ctx.lab);
  return [
    ...says('approval', deciding.message, [target.name, `direct ${target.clientUrl}`]),
    ...check(o.detailType === 'RemediationCompleted' && o.detail.target.name === target.name, `completed for ${JSON.stringify(o.detail).slice(0, 200)}`),
    ...(await membershipIs(ctx.lab, [target])),
    // The record each remediator writes into etcd before its MemberRemove: one, ours, confirmed.
    ...check(records.length === 1 && records[0]?.memberId === target.id && records[0].confirmed === true, `removal records ${JSON.stringify(records)}`),
    ...check(
      incidents.length === 1 && incidents[0]?.state === 'awaiting-replacement',
      `incidents in DynamoDB: ${incidents.map((i) => i.state).join(',') || 'none'}`,
    ),
    ...check(journal.filter((e) => e.isStepMarker && e.step === 'member-removed').length === 1, `journal: ${journal.map((e) => e.step).join(',')}`),
    ...check(wiring.stack.failed.length === 0, `invocations given up (on-failure queue): ${JSON.stringify(wiring.stack.failed)}`),
    // The idle embedded pipeline had no part in it.
    ...check(ctx.pipeline.events.length === 0 && ctx.pipeline.calls.memberRemove.length === 0, 'the embedded pipeline acted too'),
  ];
}

/** The stack synthesized (or read) before the quorum checker starts: a synth holds the event loop for seconds. */
async function startWithStack(): Promise<StartedCluster> {
  await synthOnce();
  return { lab: await startLab({ members: 3 }) };
}

const aFollower = async (lab: CaseContext['lab']): Promise<{ targets: LabMember[] }> => ({ targets: [(await followersOf(lab)).followers[0]!] });

/** Marks the failed entries the fake answered for us, so they are told from any others. */
const INJECTED = 'matrix case 21: injected entry failure';

/**
 * PutEvents answering 200 with FailedEntryCount > 0, as EventBridge does when some entries fail.
 * MembersProbed fails twice (the bus's own resends get it through), RemediationApproved four
 * times (one more than the bus resends: the invocation fails, and Lambda's retry carries out the
 * committed outbox), RemediationCompleted once.
 */
const putEventsFailures = { MembersProbed: 2, RemediationApproved: 4, RemediationCompleted: 1 } as const;

const putEventsPartialFailure: MatrixCase = {
  n: 21,
  name: 'aws-putevents-partial-failure',
  members: 3,
  expected: 'removed',
  reason: 'TARGET_IS_FOLLOWER',
  fast: true,
  timeoutMs: TIMEOUT_MS,
  start: startWithStack,
  arrange: aFollower,
  async act(ctx) {
    const wiring = await startAwsWiring(ctx);
    for (const [detailType, times] of Object.entries(putEventsFailures)) {
      wiring.stack.eventBridge.failEntries({ match: (e) => e.DetailType === detailType, times, errorMessage: INJECTED });
    }
    return [await wiring.remediate(ctx.arranged.targets[0]!.name, TIMEOUT_MS)];
  },
  async verify(ctx, checked) {
    const { stack } = wiringOf(ctx);
    const failed = stack.eventBridge.calls.flatMap((c) => c.entries.filter((_, i) => c.results[i]?.ErrorMessage === INJECTED).map((e) => e.DetailType));
    const count = (t: string) => failed.filter((f) => f === t).length;
    // The invocation the four failures failed, and its retry that got through.
    const gaveUp = stack.invocations.filter((i) => !i.ok && /RemediationApproved \(InternalFailure/.test(i.error ?? ''));
    const retried = gaveUp.some((g) => stack.invocations.some((i) => i.ok && i.event === g.event && i.attempt > g.attempt));
    console.info(
      `  fault: ${failed.length} PutEvents entries failed (${failed.join(',')}); ${gaveUp.length} invocation gave up on PutEvents, retried: ${retried}`,
    );
    return [
      ...check(
        Object.entries(putEventsFailures).every(([t, n]) => count(t) === n),
        `failed entries ${failed.join(',') || 'none'}, expected ${JSON.stringify(putEventsFailures)}`,
      ),
      ...check(gaveUp.length === 1 && retried, `invocations failed on PutEvents: ${gaveUp.length}, retried to success: ${retried}`),
      ...(await replacedOnce(ctx, checked)),
    ];
  },
};

/**
 * Every event delivered twice at once, to two warm containers of its function (Lambda scaled
 * out), and the two copies' reads of the incident paired: an odd read's answer waits (up to
 * 300 ms) for the next read, so the copies' conditional writes meet on the same version whatever
 * the timing, and DynamoDB refuses the later one. Counted where DynamoDB answers: dynalite's
 * ConditionalCheckFailed replies.
 */
function dynamoConflicts(): MatrixCase {
  const conflicts: string[] = [];
  return {
    n: 21,
    name: 'aws-dynamodb-conflicts',
    members: 3,
    expected: 'removed',
    reason: 'LEADER_MOVED',
    timeoutMs: TIMEOUT_MS,
    start: startWithStack,
    // The leader, still reachable: the move-leader function races too.
    arrange: async (lab) => ({ targets: [await lab.leader()] }),
    async act(ctx) {
      conflicts.length = 0;
      const reads = { count: 0 };
      const onReply = async (x: DynamoExchange) => {
        if (x.status === 400 && x.reply.includes('ConditionalCheckFailed')) conflicts.push(x.operation);
        if (x.operation !== 'GetItem' || !x.request.includes('"sk":{"S":"incident"}')) return;
        const mine = ++reads.count;
        if (mine % 2 === 1)
          await waitFor(async () => (reads.count > mine ? true : undefined), { timeoutMs: 300, intervalMs: 5, what: 'the other copy to read' }).catch(
            () => undefined,
          );
      };
      const wiring = await startAwsWiring(ctx, { deliverTwice: true, containersPerFunction: 2, dynalite: { onReply } });
      return [await wiring.remediate(ctx.arranged.targets[0]!.name, TIMEOUT_MS)];
    },
    async verify(ctx, checked) {
      const leader = ctx.arranged.targets[0]!;
      const o = checked.outcomes[0]!;
      console.info(`  fault: ${conflicts.length} ConditionalCheckFailed answers (${[...new Set(conflicts)].join(',')})`);
      return [
        ...check(conflicts.length > 0, 'DynamoDB never answered ConditionalCheckFailed: the deliveries did not race'),
        ...removedWithNewLeader(o, leader, 'moved'),
        ...(await replacedOnce(ctx, checked)),
      ];
    },
  };
}

/** Where the remediate container is killed: the DynamoDB write it dies at, before the answer comes back. */
interface KillPoint {
  name: string;
  /** The row's fault, as its line says it. */
  said: string;
  at: (x: DynamoExchange) => boolean;
}

/**
 * The remediate container SIGKILLed mid-step, at a DynamoDB write (the process dies before the
 * answer does), and Lambda's retry, in a fresh process under the same request id, finishes it:
 * - at its commit (the incident remediated, RemediationCompleted still in the outbox): the retry
 *   finds the step done and carries out the outbox;
 * - right after MemberRemove (the member-removed marker): the step's lease is still held, by the
 *   very invocation Lambda is retrying, so the retry takes it over and finishes the removal's
 *   steps at once, rather than waiting for the lease to lapse and the stalled-incident sweep.
 */
function killedMidStep(point: KillPoint): MatrixCase {
  let killed: { pid: number; acceptedBefore: number } | undefined;
  return {
    n: 21,
    name: point.name,
    members: 3,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    timeoutMs: TIMEOUT_MS,
    start: startWithStack,
    arrange: aFollower,
    async act(ctx) {
      killed = undefined;
      // Set once the stack is up; the hook runs from then on.
      const started: { wiring?: AwsWiring } = {};
      const onReply = async (x: DynamoExchange) => {
        const container = started.wiring?.stack.containers.get('remediate');
        if (killed || !container || !point.at(x)) return;
        killed = { pid: container.pid, acceptedBefore: started.wiring!.stack.eventBridge.accepted.length };
        container.crash();
        // The answer waits until the process is gone: it never learns its write landed.
        await waitFor(async () => (container.pid !== killed!.pid ? true : undefined), { timeoutMs: 5_000, what: 'the remediate container to die' });
      };
      const wiring = (started.wiring = await startAwsWiring(ctx, { dynalite: { onReply } }));
      return [await wiring.remediate(ctx.arranged.targets[0]!.name, TIMEOUT_MS)];
    },
    async verify(ctx, checked) {
      const { stack } = wiringOf(ctx);
      const remediate = stack.invocations.filter((i) => i.functionName === 'remediate');
      const died = remediate.find((i) => !i.ok && /Runtime\.ExitError/.test(i.error ?? ''));
      const finished = died && remediate.find((i) => i.ok && i.event === died.event && i.attempt > died.attempt);
      const fresh = stack.containers.get('remediate')!.pid;
      const completedBefore = stack.eventBridge.accepted.slice(0, killed?.acceptedBefore ?? 0).some((e) => e.event['detail-type'] === 'RemediationCompleted');
      console.info(
        `  fault: remediate pid ${killed?.pid} killed ${point.said}; ${died?.error ?? 'no death'}; finished by pid ${fresh} on try ${finished?.attempt}`,
      );
      return [
        ...check(killed !== undefined, `the remediate container was never killed: no write ${point.said}`),
        ...check(died !== undefined, 'no remediate invocation died with the container'),
        ...check(finished !== undefined, 'the killed invocation was not retried to success'),
        ...check(fresh > 0 && fresh !== killed?.pid, `remediate pid ${fresh} after the kill of ${killed?.pid}: not a fresh process`),
        ...check(!completedBefore, 'RemediationCompleted was on the bus before the kill: nothing was left to finish'),
        ...(await replacedOnce(ctx, checked)),
      ];
    },
  };
}

const atCommit: KillPoint = {
  name: 'aws-function-killed-mid-step',
  // The incident marked remediated, RemediationCompleted in its outbox.
  said: 'at its commit',
  at: (x) => x.operation === 'UpdateItem' && x.request.includes('{"S":"awaiting-replacement"}'),
};

const afterMemberRemove: KillPoint = {
  name: 'aws-function-killed-after-remove',
  // The member-removed step marker, written the moment etcd accepted MemberRemove.
  said: 'right after MemberRemove',
  at: (x) => x.operation === 'PutItem' && x.request.includes('member-removed'),
};

/**
 * remediate's step lease, written by each try of it before any etcd call, so the kill lands before
 * anything is removed. The store keeps inFlight as JSON text: its quotes come escaped.
 */
const remediateLease = (x: DynamoExchange): boolean =>
  x.operation === 'UpdateItem' && x.request.includes('\\"key\\":\\"remediate@') && x.request.includes('\\"holder\\"');

/**
 * The remediate container killed on every try of every attempt (a crash loop: OOM, a bad
 * deploy), at its step lease. Lambda gives up after three tries each time and hands the record to
 * the on-failure destination, the step-failed function, which resumes the incident at its next
 * attempt (spending one); the second attempt fails the same way, and with the budget of two
 * spent, it ends STEP_FAILED saying which step failed and how, as the local runtime says it, not
 * INCIDENT_DEADLINE_EXCEEDED through the sweep an hour later. Nothing is removed.
 */
function killedEveryTry(): MatrixCase {
  const kills: number[] = [];
  return {
    n: 21,
    name: 'aws-step-failed-every-try',
    members: 3,
    expected: 'blocked',
    reason: 'STEP_FAILED',
    fast: true,
    timeoutMs: TIMEOUT_MS,
    policy: { maxAttempts: 2 },
    start: startWithStack,
    arrange: aFollower,
    async act(ctx) {
      kills.length = 0;
      const started: { wiring?: AwsWiring } = {};
      const onReply = async (x: DynamoExchange) => {
        const container = started.wiring?.stack.containers.get('remediate');
        if (!container || !remediateLease(x)) return;
        const pid = container.pid;
        kills.push(pid);
        container.crash();
        // The answer waits until the process is gone: no try ever learns its lease landed.
        await waitFor(async () => (container.pid !== pid ? true : undefined), { timeoutMs: 5_000, what: 'the remediate container to die' });
      };
      const wiring = (started.wiring = await startAwsWiring(ctx, { dynalite: { onReply }, policy: { maxAttempts: 2 } }));
      return [await wiring.remediate(ctx.arranged.targets[0]!.name, TIMEOUT_MS)];
    },
    async verify(ctx, { outcomes, deciding }) {
      const target = ctx.arranged.targets[0]!;
      const { stack, store } = wiringOf(ctx);
      const o = outcomes[0]!;
      const remediateTries = stack.invocations.filter((i) => i.functionName === 'remediate');
      const gaveUp = stack.failed.filter((f) => f.functionName === 'remediate');
      // The outcome is on the bus before the step-failed invocation that put it has returned and been logged.
      const ranOk = () => stack.invocations.filter((i) => i.functionName === 'step-failed' && i.ok);
      await waitFor(async () => (ranOk().length >= 2 ? true : undefined), { timeoutMs: 10_000, what: 'both step-failed invocations to return' }).catch(
        () => undefined,
      );
      const stepFailedRan = ranOk();
      // The resume the first failure made: its RetryDue, for the second attempt.
      const resumed = stack.eventBridge.accepted.filter(
        (e) => e.event['detail-type'] === 'RetryDue' && (e.event.detail as { reason?: string }).reason === 'STEP_FAILED',
      );
      const incidents = await store.listIncidents({ clusterId: 'lab' });
      console.info(
        `  fault: remediate killed ${kills.length} times (${remediateTries.length} tries, ${gaveUp.length} given up); step-failed ran ${stepFailedRan.length} times; resumed ${resumed.length}`,
      );
      return [
        ...check(
          kills.length === 6 && remediateTries.every((i) => !i.ok && /Runtime\.ExitError/.test(i.error ?? '')),
          `remediate tries ${JSON.stringify(remediateTries.map((i) => i.error))}, kills ${kills.length}`,
        ),
        ...check(gaveUp.length === 2 && gaveUp.every((f) => f.destination === stack.logicalIds.get('step-failed')), `given up ${JSON.stringify(stack.failed)}`),
        ...check(
          stepFailedRan.length === 2 && stack.failed.every((f) => f.functionName === 'remediate'),
          `step-failed ran ${stepFailedRan.length} times; given up ${JSON.stringify(stack.failed)}`,
        ),
        ...check(resumed.length === 1, `RetryDue with STEP_FAILED: ${resumed.length}`),
        ...check(o.detailType === 'RemediationBlocked' && o.detail.attempt === 1, `outcome ${JSON.stringify(o.detail).slice(0, 300)}`),
        // The same words as the local runtime: core's STEP_FAILED rule, with Lambda's last error.
        ...check(
          deciding.message.startsWith(
            `The remediate step for ${target.name} (${target.id}), which answers on direct ${target.clientUrl}, failed on every delivery of RemediationApproved (attempt 1): RequestId: `,
          ) && deciding.message.includes(' Error: Runtime exited with error: signal: killed; blocked, since the attempt budget of 2 is spent. '),
          `message ${JSON.stringify(deciding.message)}`,
        ),
        ...check(
          deciding.evidence.decidedBy === 'step-failed' && deciding.evidence.functionName === 'remediate',
          `evidence ${JSON.stringify(deciding.evidence)}`,
        ),
        ...check(incidents.length === 1 && incidents[0]?.state === 'blocked', `incidents in DynamoDB: ${incidents.map((i) => i.state).join(',') || 'none'}`),
        ...(await membershipIs(ctx.lab, [])),
        ...check((await removalsRecorded(ctx.lab)).length === 0, 'a removal was recorded'),
      ];
    },
  };
}

export const awsCases: MatrixCase[] = [putEventsPartialFailure, dynamoConflicts(), killedMidStep(atCommit), killedMidStep(afterMemberRemove), killedEveryTry()];
