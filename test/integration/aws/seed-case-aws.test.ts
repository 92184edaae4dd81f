// The seed case through the deployed shape, on this machine: the synthesized stack's own bundles
// in warm container processes, routed by the template's own rules through protocol-level fakes of
// EventBridge, Scheduler, SQS and the Pipe that follow AWS's documentation, every hop 150 ms (the
// published median EventBridge-to-Lambda latency), the store on dynalite, real etcd with the
// leader's path cut. One MemberRemove, the whole chain of events, the figure printed beside the
// local embedded runtime's and the bound of grace + 2 × election timeout + 1 s, which demo:aws
// --runs 5 holds the median to.
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { HOP_LATENCY_MS, startDeployedStack, type DeployedStack, type DeployedStackOptions } from '../../support/aws-sim/deployed-stack.ts';
import { registerLab, removalsRecorded as recordedOn, reportUnhealthy } from '../../support/aws-sim/lab-on-stack.ts';
import { SEED_BOUND_MS, SEED_ELECTION_MS, seedCaseLocal, seedCaseOnStack, seedPolicy } from '../../support/aws-sim/seed-case-run.ts';
import type { CfnTemplate } from '../../support/fakes/cfn-template.ts';
import { synthStack } from '../../infra/synth.ts';

describe.sequential('the seed case on the AWS wiring', () => {
  let template: CfnTemplate;
  let assemblyDir: string;
  let lab: Lab | undefined;
  let deployed: DeployedStack | undefined;
  /** The local runtime's figure, for the line beside the AWS one. */
  let localMs: number | undefined;
  /** Started before the synth: etcd 3.4 refuses reconfiguration for ~5 s after its members connect. */
  const labs: Lab[] = [];

  beforeAll(async () => {
    const started = await Promise.allSettled([1, 2, 3, 4].map(() => startLab({ members: 3, electionTimeoutMs: SEED_ELECTION_MS })));
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

  const nextLab = (): Lab => {
    lab = labs.shift()!;
    used.push(lab);
    return lab;
  };

  async function run(options: DeployedStackOptions & { crash?: string } = {}) {
    const { crash, ...stackOptions } = options;
    const theLab = nextLab();
    deployed = await startDeployedStack(template, assemblyDir, stackOptions);
    if (crash) {
      // One container dies the first time it is handed an event, mid-incident.
      const container = deployed.containers.get(crash)!;
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
    const result = await seedCaseOnStack(deployed, theLab);
    const newLeader = await theLab.waitForLeader({ excluding: [result.leader.name], timeoutMs: 10_000 });
    return { ...result, newLeader };
  }

  const typesOn = (stack: DeployedStack): string[] => stack.eventBridge.accepted.map((e) => e.event['detail-type']);

  const removalsRecorded = () => recordedOn(lab!);

  it('the local embedded runtime: the same lab, policy and fault, for the figure beside the AWS one', async () => {
    const { tookMs } = await seedCaseLocal(nextLab());
    localMs = tookMs;
    expect(tookMs).toBeLessThanOrEqual(SEED_BOUND_MS);
  }, 120_000);

  it('removes the cut leader without a move, once, through the synthesized rules, with 150 ms a hop, within twice the bound', async () => {
    const { leader, completed, newLeader, tookMs } = await run();
    const stack = deployed!;
    const detail = completed.event.detail as { leaderMove: string; target: { name: string }; newLeader: { id: string } };
    expect(detail).toMatchObject({ leaderMove: 'skipped', target: { name: leader.name } });
    expect(detail.newLeader.id).toBe(newLeader.id);
    // The chain, as the bus saw it.
    const types = typesOn(stack);
    for (const t of ['MemberUnhealthy', 'MembersProbed', 'RetryRequested', 'RetryDue', 'RemediationApproved', 'RemediationCompleted'])
      expect(types).toContain(t);
    expect(types).not.toContain('RemediationBlocked');
    // Short waits went through SQS and the Pipe; nothing waited on Scheduler's minute.
    expect(stack.sqs.sent.length).toBeGreaterThan(0);
    expect(stack.scheduler.requests).toEqual([]);
    // Exactly one removal: etcd's own member list, and the record written before each MemberRemove.
    expect((await lab!.memberList()).map((m) => m.id).sort()).toEqual(
      lab!.members
        .filter((m) => m.id !== leader.id)
        .map((m) => m.id)
        .sort(),
    );
    expect(await removalsRecorded()).toEqual([expect.objectContaining({ memberId: leader.id, confirmed: true })]);
    expect(stack.failed).toEqual([]);
    // The snapshot taken before the removal is in the bucket, its bytes those the completion records.
    const snapshot = (completed.event.detail as { snapshot?: { location: string; bytes: number; sha256: string } }).snapshot;
    expect(snapshot?.location).toMatch(new RegExp(`^s3://${stack.snapshotBucket}/snapshots/lab/`));
    const object = stack.s3.objects.get(snapshot!.location.slice('s3://'.length))!;
    expect(object.body.length).toBe(snapshot!.bytes);
    expect(createHash('sha256').update(object.body).digest('hex')).toBe(snapshot!.sha256);
    expect(stack.s3.objects.get(`${snapshot!.location.slice('s3://'.length)}.sha256`)?.body.toString()).toMatch(new RegExp(`^${snapshot!.sha256}  `));
    expect(stack.s3.openUploads()).toEqual([]);
    console.log(
      `aws wiring, ${HOP_LATENCY_MS} ms a hop: event → new leader ${tookMs} ms; local runtime ${localMs ?? '?'} ms; ` +
        `bound grace + 2 × election + 1 s = ${SEED_BOUND_MS} ms; ` +
        `${stack.invocations.length} invocations, ${stack.eventBridge.accepted.length} events, ${stack.sqs.sent.length} short waits, ${stack.scheduler.requests.length} schedules`,
    );
    const from = stack.eventBridge.accepted[0]?.acceptedAt ?? 0;
    console.log(
      stack.eventBridge.accepted
        .map((e) => `+${e.acceptedAt - from} ms ${e.event['detail-type']} ${(e.event.detail as { reason?: string }).reason ?? ''}`)
        .join('\n'),
    );
    // The bound itself is a goal of the median of 5 runs (`npm run demo:aws -- --runs 5`), not of one
    // run on a busy machine. Held here: no wait took a slow path (a Scheduler minute, a Lambda
    // retry a minute later), each of which would add far more than the bound again.
    expect(tookMs).toBeLessThanOrEqual(2 * SEED_BOUND_MS);
  }, 120_000);

  it('every event delivered twice by the bus and every short wait twice by SQS, the remediate container crashing mid-incident: still one removal', async () => {
    // Lambda's retry after about a minute, compressed to 600 ms.
    const { leader } = await run({ deliverTwice: true, shortWaitsTwice: true, crash: 'remediate', compression: 100 });
    const stack = deployed!;
    expect((await lab!.memberList()).map((m) => m.id).sort()).toEqual(
      lab!.members
        .filter((m) => m.id !== leader.id)
        .map((m) => m.id)
        .sort(),
    );
    expect(await removalsRecorded()).toEqual([expect.objectContaining({ memberId: leader.id, confirmed: true })]);
    // The incident ends once: one incident, remediated; a completion published again says the same.
    const incidents = await createDynamoIncidentStore({ client: stack.dynalite.client(), tableName: stack.tableName }).listIncidents({ clusterId: 'lab' });
    expect(incidents.map((i) => [i.state, i.memberId])).toEqual([['awaiting-replacement', leader.id]]);
    const completions = stack.eventBridge.accepted
      .filter((e) => e.event['detail-type'] === 'RemediationCompleted')
      .map((e) => e.event.detail as { incidentId: string; newLeader: { id: string } });
    expect(completions.length).toBeGreaterThanOrEqual(1);
    expect(new Set(completions.map((c) => `${c.incidentId} ${c.newLeader.id}`)).size).toBe(1);
    expect(completions[0]!.incidentId).toBe(incidents[0]!.incidentId);
    expect(typesOn(stack)).not.toContain('RemediationBlocked');
    expect(stack.sqs.sent.length).toBeGreaterThan(0);
    // The crash failed one try; Lambda's retry did the step.
    expect(stack.invocations.some((i) => i.functionName === 'remediate' && !i.ok)).toBe(true);
    expect(stack.failed).toEqual([]);
  }, 120_000);

  it('the bucket answering every part 503 SlowDown: blocked with SNAPSHOT_FAILED naming the bucket, nothing removed, no upload left open', async () => {
    const theLab = nextLab();
    deployed = await startDeployedStack(template, assemblyDir);
    const stack = deployed;
    stack.s3.slowDownParts(Number.MAX_SAFE_INTEGER);
    const leader = await theLab.leader();
    const before = (await theLab.memberList()).map((m) => m.id).sort();
    await theLab.fault(leader.name, 'cut');
    await registerLab(stack, theLab, seedPolicy);
    expect(await reportUnhealthy(stack, leader.name)).toBe(0);
    const blocked = await waitFor(
      async () => stack.eventBridge.accepted.find((e) => e.event['detail-type'] === 'RemediationBlocked' || e.event['detail-type'] === 'RemediationCompleted'),
      {
        timeoutMs: 60_000,
        what: 'the incident to end',
      },
    );
    const detail = blocked.event.detail as { reason?: string; message?: string };
    expect(blocked.event['detail-type'], JSON.stringify(detail).slice(0, 800)).toBe('RemediationBlocked');
    expect(detail.reason).toBe('SNAPSHOT_FAILED');
    expect(detail.message).toContain(`the snapshot store bucket ${stack.snapshotBucket} refused it: `);
    expect(detail.message).toMatch(/reduce your request rate.*nothing was removed; blocked\. Fix the store/);
    expect((await theLab.memberList()).map((m) => m.id).sort()).toEqual(before);
    expect(stack.s3.openUploads()).toEqual([]);
    expect([...stack.s3.objects.keys()]).toEqual([]);
    expect(stack.s3.calls.filter((c) => c.operation === 'UploadPart').every((c) => c.status === 503)).toBe(true);
  }, 120_000);
});
