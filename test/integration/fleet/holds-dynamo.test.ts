// The fleet's holds on a deployed stack's table (dynalite), with the functions' own handlers on a
// real etcd lab: the pause and the storm are written through one handle (the real binary, as a
// person runs it) and held by the containers' own handles; `resume` through the first lets the
// containers go on. No removal while held.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent } from '../../../events/catalogue.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { runCli } from '../cli/support.ts';
import { startDynamoPipeline, type DynamoPipeline } from '../storm/dynamo-pipeline.ts';
import { settle } from '../storm/support.ts';

let dynamo: Dynalite;
let lab: Lab | undefined;
let pipeline: DynamoPipeline | undefined;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterEach(async () => {
  try {
    await pipeline?.close();
  } finally {
    pipeline = undefined;
    await lab?.down();
    lab = undefined;
  }
});
afterAll(async () => dynamo?.close());

const env = () => ({ AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' });
const report = (memberName: string) =>
  makeEvent('MemberUnhealthy', {
    clusterId: 'lab',
    attempt: 0,
    target: { memberName },
    reason: 'kubelet down',
    source: 'test',
    observedAt: new Date().toISOString(),
    at: new Date().toISOString(),
  });
const said = (p: DynamoPipeline, reason: string) =>
  p.events.some((e) => e.detailType === 'RetryRequested' && (e.detail as { reason?: string }).reason === reason);

describe.sequential('fleet holds on DynamoDB, two handles', () => {
  it('a pause written through one handle (and into etcd) holds the containers; resume lets them remove', async () => {
    lab = await startLab({ members: 3 });
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    await settle(lab);
    const p = (pipeline = await startDynamoPipeline(lab, dynamo, { containers: 2, policy: { backoff: { baseMs: 300 } } }));
    const access = ['--table', p.tableName, '--cluster', 'lab', '--endpoints', lab.endpoints().join(',')];
    const paused = await runCli(['pause', ...access, '--why', 'zone b maintenance'], { env: env() });
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/^paused cluster lab in table \S+ and in the etcd of cluster lab/);

    await p.bus.publish(report(follower.name));
    await waitFor(async () => (said(p, 'PAUSED') ? true : undefined), { timeoutMs: 30_000, what: 'the containers to say PAUSED' });
    expect(p.calls.memberRemove).toEqual([]);

    const resumed = await runCli(['resume', ...access], { env: env() });
    expect(resumed.code, resumed.stderr).toBe(0);
    await waitFor(async () => p.events.find((e) => e.detailType === 'RemediationCompleted'), {
      timeoutMs: 30_000,
      what: 'the remediation to complete once resumed',
    });
    expect(p.calls.memberRemove).toHaveLength(1);
  }, 90_000);

  it('a storm the table shows holds the containers; resume --storm through the other handle lets them remove', async () => {
    lab = await startLab({ members: 3 });
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    await settle(lab);
    const p = (pipeline = await startDynamoPipeline(lab, dynamo, { containers: 2, otherClusters: ['x', 'y', 'z'], policy: { backoff: { baseMs: 300 } } }));
    // Another cluster of the fleet failed a moment ago, as another container recorded it.
    const other = createDynamoIncidentStore({ client: dynamo.client(), tableName: p.tableName });
    await other.noteOpened('x', Date.now());

    await p.bus.publish(report(follower.name));
    await waitFor(async () => (said(p, 'FLEET_STORM') ? true : undefined), { timeoutMs: 30_000, what: 'the containers to say FLEET_STORM' });
    expect(p.calls.memberRemove).toEqual([]);

    const ended = await runCli(['resume', '--storm', '--table', p.tableName, '--endpoints', lab.endpoints().join(','), '--why', 'real'], { env: env() });
    expect(ended.code, ended.stderr).toBe(0);
    await waitFor(async () => p.events.find((e) => e.detailType === 'RemediationCompleted'), {
      timeoutMs: 30_000,
      what: 'the remediation to complete once the storm ended',
    });
    expect(p.calls.memberRemove).toHaveLength(1);
  }, 90_000);
});
