// Leader hygiene's periodic check as AWS runs it: probe-members' Lambda entry on its AWS wiring
// (the real SDK clients, DynamoDB on dynalite, the EventBridge fake). The schedule rule's fixed
// input is a round, which puts one HygieneCheckDue per registered cluster on our bus; each, handed
// back to the entry as its rule delivers it, is checked there: a cluster with hygiene off answers
// 'off' at once and no member is reached (one with hygiene on is probed at the same endpoints), a
// cluster no longer registered 'unknown-cluster'.
import { createServer, type Server, type Socket, type AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SOURCE, type EventEnvelope } from '../../../events/catalogue.ts';
import { parseEvent } from '../../../events/validate.ts';
import { putCluster } from '../../../functions/adapters/aws/cluster-registration.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import type { Deps } from '../../../functions/app/common/deps.ts';
import { HYGIENE_ROUND_INPUT } from '../../../functions/core/hygiene/hygiene-round.ts';
import { LEARNER_CHECK_ROUND_INPUT } from '../../../functions/core/learners/learner-check.ts';
import { MAINTENANCE_ROUND_INPUT } from '../../../functions/core/maintenance/index.ts';
import { toEventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import { hygieneRound } from '../../../functions/probe-members/hygiene-round.ts';
import { localContext } from '../../../infra/runtime/lambda-context.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { startEventBridgeFake, type EventBridgeFake } from '../../support/fakes/eventbridge-fake.ts';
import { fullEnv } from '../../unit/aws/env-fixture.ts';

const BUS = 'remediation';
/** A probe that reached a member would wait this long for an answer the stand-in never gives. */
const CALL_TIMEOUT_MS = 5_000;

let dynamo: Dynalite;
let bus: EventBridgeFake;
/** Stands where every member's client URL points: counts each connection and answers none. */
let etcdStandIn: Server;
const connections: Socket[] = [];
let tableName: string;
let handler: (event: unknown, context: Context) => Promise<unknown>;
const lambdaEnv: Record<string, string> = {};
const before = { ...process.env };

beforeAll(async () => {
  [dynamo, bus] = await Promise.all([startDynalite(), startEventBridgeFake({ buses: [BUS] })]);
  etcdStandIn = createServer((socket) => void connections.push(socket));
  await new Promise<void>((resolve) => etcdStandIn.listen(0, '127.0.0.1', resolve));
  const endpoints = [`http://127.0.0.1:${(etcdStandIn.address() as AddressInfo).port}`];
  tableName = await dynamo.createTable();
  // Hygiene is off unless a cluster's policy turns it on.
  for (const clusterId of ['quiet-b', 'quiet-a'])
    await putCluster(dynamo.client(), tableName, { clusterId, endpoints, policy: { callTimeoutMs: CALL_TIMEOUT_MS } });
  // As the stack sets them on the function, with the endpoints pointed at the fakes.
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
  ({ handler } = await import('../../../functions/probe-members/lambda.ts'));
});

afterAll(async () => {
  for (const name of Object.keys(lambdaEnv)) {
    if (before[name] === undefined) delete process.env[name];
    else process.env[name] = before[name];
  }
  for (const socket of connections) socket.destroy();
  await Promise.all([dynamo?.close(), bus?.close(), new Promise((resolve) => etcdStandIn?.close(resolve))]);
});

const acceptedOf = (detailType: string) => bus.accepted.filter((a) => a.event['detail-type'] === detailType);

describe("probe-members' Lambda entry on the hygiene round's fixed input", () => {
  it('asks for one valid HygieneCheckDue per registered cluster on our bus, and still answers the learner round', async () => {
    const from = Date.now();
    expect(await handler(HYGIENE_ROUND_INPUT, localContext('probe-members'))).toEqual({ asked: 2 });
    const asked = acceptedOf('HygieneCheckDue');
    expect(asked.map((a) => [a.busName, a.event.source, (a.event.detail as { clusterId: string }).clusterId]).sort()).toEqual([
      [BUS, EVENT_SOURCE, 'quiet-a'],
      [BUS, EVENT_SOURCE, 'quiet-b'],
    ]);
    for (const { event } of asked) {
      expect(parseEvent('HygieneCheckDue', event.detail).ok).toBe(true);
      const at = Date.parse((event.detail as { at: string }).at);
      expect(at).toBeGreaterThanOrEqual(from - 1_000);
      expect(at).toBeLessThanOrEqual(Date.now());
    }
    // The learner round keeps its own input and its own detail type.
    expect(await handler(LEARNER_CHECK_ROUND_INPUT, localContext('probe-members'))).toEqual({ asked: 2 });
    expect(acceptedOf('LearnerCheckDue')).toHaveLength(2);
    expect(acceptedOf('HygieneCheckDue')).toHaveLength(2);
  });

  it('asks for one valid MaintenanceDue per registered cluster on its maintenance round, said to come from the round', async () => {
    expect(await handler(MAINTENANCE_ROUND_INPUT, localContext('probe-members'))).toEqual({ asked: 2 });
    const asked = acceptedOf('MaintenanceDue');
    expect(asked.map((a) => (a.event.detail as { clusterId: string }).clusterId).sort()).toEqual(['quiet-a', 'quiet-b']);
    for (const { event } of asked) {
      expect(parseEvent('MaintenanceDue', event.detail).ok).toBe(true);
      expect(event.detail).toMatchObject({ askedBy: 'maintenance-round' });
    }
  });

  it("each check it asked for, delivered back to it, answers 'off' for a cluster with hygiene off, at once, reaching no member and writing no record", async () => {
    const asked = acceptedOf('HygieneCheckDue');
    expect(asked).toHaveLength(2);
    const published = bus.accepted.length;
    for (const { event } of asked) {
      const started = Date.now();
      expect(await handler(event, localContext('probe-members'))).toEqual({ kind: 'off' });
      // A probe would have waited CALL_TIMEOUT_MS on the stand-in.
      expect(Date.now() - started).toBeLessThan(CALL_TIMEOUT_MS);
    }
    expect(connections).toHaveLength(0);
    expect(bus.accepted).toHaveLength(published);
    const store = createDynamoIncidentStore({ client: dynamo.client(), tableName });
    expect(await store.hygieneRecord('quiet-a')).toBeUndefined();
    expect(await store.hygieneRecord('quiet-b')).toBeUndefined();
  });

  it('while a cluster with hygiene on is probed at those same endpoints (the stand-in counts what a check reaches)', async () => {
    const endpoints = [`http://127.0.0.1:${(etcdStandIn.address() as AddressInfo).port}`];
    await putCluster(dynamo.client(), tableName, { clusterId: 'watched', endpoints, policy: { callTimeoutMs: 500, hygiene: { enabled: true } } });
    const event = toEventBridgeEvent({ detailType: 'HygieneCheckDue', detail: { clusterId: 'watched', at: new Date().toISOString() } });
    // Nothing answers, so no member has a sample: judged as not yet judgeable, and kept in its record.
    expect(await handler(event, localContext('probe-members'))).toEqual({
      kind: 'judged',
      verdict: expect.objectContaining({ kind: 'not-evaluated', reason: 'HYGIENE_UNSTABLE' }),
      published: [],
    });
    expect(connections.length).toBeGreaterThan(0);
    const stored = await createDynamoIncidentStore({ client: dynamo.client(), tableName }).hygieneRecord('watched');
    expect(stored?.record.lastJudged).toMatchObject({ kind: 'not-evaluated', reason: 'HYGIENE_UNSTABLE' });
  });

  it("a HygieneCheckDue for a cluster no longer registered answers 'unknown-cluster' and fails nothing", async () => {
    const event = toEventBridgeEvent({ detailType: 'HygieneCheckDue', detail: { clusterId: 'gone', at: new Date().toISOString() } });
    expect(await handler(event, localContext('probe-members'))).toEqual({ kind: 'unknown-cluster' });
  });
});

describe('the hygiene round', () => {
  const roundDeps = (registeredClusterIds: () => Promise<readonly string[] | undefined>) => {
    const published: EventEnvelope[] = [];
    const warnings: string[] = [];
    const deps: Pick<Deps, 'directory' | 'bus' | 'clock' | 'log'> = {
      directory: { get: () => Promise.reject(new Error('a round reads no entry')), registeredClusterIds },
      bus: { publish: async (...events) => void published.push(...events) },
      clock: { now: () => Date.parse('2025-06-01T12:05:00.000Z') },
      log: { debug: () => {}, info: () => {}, error: () => {}, warn: (message) => void warnings.push(message) },
    };
    return { deps, published, warnings };
  };

  it('asks for nothing, and says so, when the registered clusters cannot be listed', async () => {
    const { deps, published, warnings } = roundDeps(async () => undefined);
    expect(await hygieneRound(deps)).toEqual({ asked: 0 });
    expect(published).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/^leader hygiene round: the registered clusters could not be listed/)]);
  });

  it("publishes nothing for no registered cluster, and one check per cluster, at the round's time", async () => {
    const none = roundDeps(async () => []);
    expect(await hygieneRound(none.deps)).toEqual({ asked: 0 });
    expect(none.published).toEqual([]);
    const two = roundDeps(async () => ['a', 'b']);
    expect(await hygieneRound(two.deps)).toEqual({ asked: 2 });
    expect(two.published).toEqual([
      { source: EVENT_SOURCE, detailType: 'HygieneCheckDue', detail: { clusterId: 'a', at: '2025-06-01T12:05:00.000Z' } },
      { source: EVENT_SOURCE, detailType: 'HygieneCheckDue', detail: { clusterId: 'b', at: '2025-06-01T12:05:00.000Z' } },
    ]);
  });
});
