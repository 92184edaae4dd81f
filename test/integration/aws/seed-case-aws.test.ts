// The seed case through the deployed shape, on this machine: the synthesized stack's own bundles
// in warm container processes, routed by the template's own rules through protocol-level fakes of
// EventBridge, Scheduler, SQS and the Pipe, the store on dynalite, real etcd with the leader's path
// cut. One MemberRemove, the whole chain of events, inside the time goal.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { startDeployedStack, type DeployedStack } from '../../support/aws-sim/deployed-stack.ts';
import { registerLab, removalsRecorded as recordedOn, reportUnhealthy } from '../../support/aws-sim/lab-on-stack.ts';
import type { CfnTemplate } from '../../support/fakes/cfn-template.ts';
import { synthStack } from '../../infra/synth.ts';

const GRACE_MS = 3_000;
const ELECTION_MS = 500;

describe.sequential('the seed case on the AWS wiring', () => {
  let template: CfnTemplate;
  let assemblyDir: string;
  let lab: Lab | undefined;
  let deployed: DeployedStack | undefined;
  /** Started before the synth: etcd 3.4 refuses reconfiguration for ~5 s after its members connect. */
  const labs: Lab[] = [];

  beforeAll(async () => {
    const started = await Promise.allSettled([1, 2].map(() => startLab({ members: 3, electionTimeoutMs: ELECTION_MS })));
    // Every lab that started is torn down in afterAll, even when another failed to.
    for (const result of started) if (result.status === 'fulfilled') labs.push(result.value);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const synth = synthStack();
    template = synth.json;
    assemblyDir = synth.assemblyDir;
  }, 120_000);
  afterEach(async () => {
    await deployed?.close();
    deployed = undefined;
  });
  const used: Lab[] = [];
  afterAll(async () => {
    await Promise.all([...labs, ...used].map((l) => l.down()));
  });

  async function run(options: { deliverTwice?: boolean; crash?: string } = {}) {
    lab = labs.shift()!;
    used.push(lab);
    const leader = await lab.leader();
    await lab.fault(leader.name, 'cut');
    deployed = await startDeployedStack(template, assemblyDir, options);
    await registerLab(deployed, lab, { graceMs: GRACE_MS, electionTimeoutMs: ELECTION_MS, callTimeoutMs: 1_000, backoff: { baseMs: 200, capMs: 1_000 }, maxAttempts: 60 });
    if (options.crash) {
      // One container dies the first time it is handed an event, mid-incident.
      const container = deployed.containers.get(options.crash)!;
      const invoke = container.invokeAsync.bind(container);
      let crashed = false;
      container.invokeAsync = async (event) => {
        if (!crashed) {
          crashed = true;
          const running = invoke(event);
          container.crash();
          return running;
        }
        return invoke(event);
      };
    }
    const started = Date.now();
    expect(await reportUnhealthy(deployed, leader.name)).toBe(0);
    const stack = deployed;
    const completed = await waitFor(async () => stack.eventBridge.accepted.find((e) => e.event['detail-type'] === 'RemediationCompleted'), { timeoutMs: 60_000, what: 'RemediationCompleted on the bus' });
    const newLeader = await lab.waitForLeader({ excluding: [leader.name], timeoutMs: 10_000 });
    // When remediate saw the new leader stand, as its journal says: not when this test polled.
    const step = (completed.event.detail as { timeline: { step: string; at: string }[] }).timeline.find((e) => e.step === 'leader-elected');
    const tookMs = Date.parse(step?.at ?? '') - started;
    return { leader, completed, newLeader, tookMs };
  }

  const typesOn = (stack: DeployedStack): string[] => stack.eventBridge.accepted.map((e) => e.event['detail-type']);

  const removalsRecorded = () => recordedOn(lab!);

  it('removes the cut leader without a move, once, through the synthesized rules, inside the time goal', async () => {
    const { leader, completed, newLeader, tookMs } = await run();
    const stack = deployed!;
    const detail = completed.event.detail as { leaderMove: string; target: { name: string }; newLeader: { id: string } };
    expect(detail).toMatchObject({ leaderMove: 'skipped', target: { name: leader.name } });
    expect(detail.newLeader.id).toBe(newLeader.id);
    // The chain, as the bus saw it.
    const types = typesOn(stack);
    for (const t of ['MemberUnhealthy', 'MembersProbed', 'RetryRequested', 'RetryDue', 'RemediationApproved', 'RemediationCompleted']) expect(types).toContain(t);
    expect(types).not.toContain('RemediationBlocked');
    // Short waits went through SQS and the Pipe; nothing waited on Scheduler's minute.
    expect(stack.sqs.sent.length).toBeGreaterThan(0);
    expect(stack.scheduler.requests).toEqual([]);
    // Exactly one removal: etcd's own member list, and the record written before each MemberRemove.
    expect((await lab!.memberList()).map((m) => m.id).sort()).toEqual(lab!.members.filter((m) => m.id !== leader.id).map((m) => m.id).sort());
    expect(await removalsRecorded()).toEqual([expect.objectContaining({ memberId: leader.id, confirmed: true })]);
    expect(stack.failed).toEqual([]);
    const goal = GRACE_MS + 2 * ELECTION_MS + 1_000;
    // Printed, not asserted: a timing goal belongs to a benchmark (npm run demo:aws), not a test.
    console.log(
      `aws wiring: event → new leader ${tookMs} ms (goal grace + 2 × election + 1 s = ${goal} ms: ${tookMs <= goal ? 'met' : 'missed'}); ` +
        `${stack.invocations.length} invocations, ${stack.eventBridge.accepted.length} events, ${stack.sqs.sent.length} short waits, ${stack.scheduler.requests.length} schedules`,
    );
  }, 120_000);

  it('every event delivered twice and the remediate container crashing mid-incident: still one removal', async () => {
    const { leader } = await run({ deliverTwice: true, crash: 'remediate' });
    const stack = deployed!;
    expect((await lab!.memberList()).map((m) => m.id).sort()).toEqual(lab!.members.filter((m) => m.id !== leader.id).map((m) => m.id).sort());
    expect(await removalsRecorded()).toEqual([expect.objectContaining({ memberId: leader.id, confirmed: true })]);
    expect(typesOn(stack).filter((t) => t === 'RemediationCompleted').length).toBeGreaterThanOrEqual(1);
    // The crash failed one try; Lambda's retry did the step.
    expect(stack.invocations.some((i) => i.functionName === 'remediate' && !i.ok)).toBe(true);
    expect(stack.failed).toEqual([]);
  }, 120_000);
});
