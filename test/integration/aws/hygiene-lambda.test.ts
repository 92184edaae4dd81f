// Leader hygiene through the AWS wiring on real etcd: probe-members' Lambda entry checks a
// registered cluster (its scrapes kept in the DynamoDB record on dynalite), and move-leader's
// entry takes LeaderDegraded as its rule delivers it: delivered twice it moves leadership once,
// says HygieneMoveEnded on the bus both times, and a forged one moves nothing.
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putCluster } from '../../../functions/adapters/aws/cluster-registration.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { emptyHygieneRecord, type HygieneMoveRecord } from '../../../functions/core/hygiene/hygiene-record.ts';
import { toEventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import type { IncidentStore } from '../../../functions/ports/incident-store.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { localContext } from '../../../infra/runtime/lambda-context.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { startEventBridgeFake, type EventBridgeFake } from '../../support/fakes/eventbridge-fake.ts';
import { fullEnv } from '../../unit/aws/env-fixture.ts';

const BUS = 'remediation';
const CLUSTER = 'lab';
type Handler = (event: unknown, context: Context) => Promise<unknown>;

let lab: Lab;
let dynamo: Dynalite;
let bus: EventBridgeFake;
let store: IncidentStore;
let probeMembers: Handler;
let moveLeader: Handler;
const lambdaEnv: Record<string, string> = {};
const before = { ...process.env };

beforeAll(async () => {
  [lab, dynamo, bus] = await Promise.all([startLab({ members: 3 }), startDynalite(), startEventBridgeFake({ buses: [BUS] })]);
  const tableName = await dynamo.createTable();
  await putCluster(dynamo.client(), tableName, {
    clusterId: CLUSTER,
    endpoints: lab.endpoints(),
    policy: { electionTimeoutMs: 500, callTimeoutMs: 2_000, hygiene: { enabled: true } },
  });
  store = createDynamoIncidentStore({ client: dynamo.client(), tableName });
  Object.assign(lambdaEnv, {
    ...fullEnv,
    TABLE_NAME: tableName,
    BUS_NAME: BUS,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
  });
  for (const [name, value] of Object.entries(lambdaEnv)) process.env[name] = value;
  ({ handler: probeMembers } = await import('../../../functions/probe-members/lambda.ts'));
  ({ handler: moveLeader } = await import('../../../functions/move-leader/lambda.ts'));
}, 60_000);

afterAll(async () => {
  for (const name of Object.keys(lambdaEnv)) {
    if (before[name] === undefined) delete process.env[name];
    else process.env[name] = before[name];
  }
  await Promise.all([lab?.down(), dynamo?.close(), bus?.close()]);
});

const endedOnBus = () => bus.accepted.filter((a) => a.event['detail-type'] === 'HygieneMoveEnded').map((a) => a.event.detail as Record<string, unknown>);

describe('leader hygiene through the Lambda entries', () => {
  it("probe-members' check scrapes every member and keeps the scrapes in the cluster's DynamoDB record", async () => {
    const event = toEventBridgeEvent({ detailType: 'HygieneCheckDue', detail: { clusterId: CLUSTER, at: new Date().toISOString() } });
    // The first check has one scrape of each member and no interval yet: the samples are too few to judge.
    expect(await probeMembers(event, localContext('probe-members'))).toMatchObject({ kind: 'judged', verdict: { reason: 'HYGIENE_UNSTABLE' } });
    const stored = (await store.hygieneRecord(CLUSTER))!;
    expect(Object.keys(stored.record.lastScrapes).sort()).toEqual(lab.members.map((m) => m.id).sort());
    const leader = await lab.leader();
    expect(stored.record.lastScrapes[leader.id]).toMatchObject({ isLeader: true, hasLeader: true });
    // Histogram bounds end in +Inf: kept through DynamoDB, or the next interval would read as a restart.
    expect(stored.record.lastScrapes[leader.id]!.walFsync.buckets.at(-1)![0]).toBe(Number.POSITIVE_INFINITY);
    await probeMembers(
      toEventBridgeEvent({ detailType: 'HygieneCheckDue', detail: { clusterId: CLUSTER, at: new Date().toISOString() } }),
      localContext('probe-members'),
    );
    const samples = (await store.hygieneRecord(CLUSTER))!.record.samples[leader.id]!;
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({ isLeader: true, restarted: false });
  });

  it("move-leader's entry makes an asked move once, however often it is delivered, and refuses one the record does not keep", async () => {
    const leader = await lab.leader();
    const target = lab.members.find((m) => m.id !== leader.id)!;
    const term = (await lab.status(leader.name)).raftTerm;
    const move: HygieneMoveRecord = {
      moveId: 'hygiene-lab-aws-1',
      at: Date.now(),
      state: 'asked',
      from: leader.id,
      to: target.id,
      term,
      message: `move leadership from ${leader.name} to ${target.name}: a test judged it`,
    };
    const stored = await store.hygieneRecord(CLUSTER);
    await store.saveHygieneRecord(CLUSTER, { ...(stored?.record ?? emptyHygieneRecord()), moves: [move] }, stored?.version ?? 0);
    const delivered = toEventBridgeEvent({
      detailType: 'LeaderDegraded',
      detail: {
        clusterId: CLUSTER,
        moveId: move.moveId,
        at: new Date(move.at).toISOString(),
        from: move.from,
        to: move.to,
        term,
        dryRun: false,
        reason: 'LEADER_DEGRADED',
        message: move.message!,
        evidence: {},
      },
    });
    expect(await moveLeader(delivered, localContext('move-leader'))).toMatchObject({ kind: 'ended', state: 'moved', again: false });
    expect((await lab.leader()).id).toBe(target.id);
    expect(await moveLeader(delivered, localContext('move-leader'))).toMatchObject({ kind: 'ended', state: 'moved', again: true });
    expect((await lab.status(target.name)).raftTerm).toBe(term + 1);
    const ended = endedOnBus();
    expect(ended).toHaveLength(2);
    expect(ended[0]).toMatchObject({ outcome: 'moved', from: leader.id, to: target.id, newTerm: term + 1 });

    const forged = toEventBridgeEvent({
      detailType: 'LeaderDegraded',
      detail: { ...(delivered.detail as object), moveId: 'hygiene-lab-forged', from: target.id, to: leader.id },
    });
    expect(await moveLeader(forged, localContext('move-leader'))).toEqual({ kind: 'unknown-move' });
    expect((await lab.leader()).id).toBe(target.id);
    expect(endedOnBus()).toHaveLength(2);
  });
});
