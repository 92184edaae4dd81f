// The intake's Lambda entry on its AWS wiring: the real SDK clients, DynamoDB on dynalite, the
// EventBridge fake. A registered instance's signal becomes a MemberUnhealthy on our bus; an
// unknown one is a dead letter in the table; a cluster's secrets are never read.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EVENT_SOURCE } from '../../../events/catalogue.ts';
import { putCluster } from '../../../functions/adapters/aws/dynamodb-directory.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import type { IntakeResult } from '../../../functions/app/intake/intake.ts';
import { localContext } from '../../../infra/runtime/lambda-context.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { startEventBridgeFake, type EventBridgeFake } from '../../support/fakes/eventbridge-fake.ts';

type Json = Record<string, unknown> & { detail: Record<string, unknown> };
const sample = (name: string): Json => JSON.parse(readFileSync(new URL(`../../../events/samples/intake/${name}.json`, import.meta.url), 'utf8')) as Json;

let dynamo: Dynalite;
let bus: EventBridgeFake;
/** Stands where Secrets Manager would be: counts every request and answers none of them well. */
let secrets: Server;
let secretRequests = 0;
let tableName: string;
let handler: (event: unknown, context: ReturnType<typeof localContext>) => Promise<IntakeResult>;
const lambdaEnv: Record<string, string> = {};
const before = { ...process.env };

beforeAll(async () => {
  [dynamo, bus] = await Promise.all([startDynalite(), startEventBridgeFake({ buses: ['remediation'] })]);
  secrets = createServer((_req, res) => {
    secretRequests += 1;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => secrets.listen(0, '127.0.0.1', resolve));
  tableName = await dynamo.createTable();
  await putCluster(dynamo.client(), tableName, {
    clusterId: 'prod-eu-1',
    endpoints: ['https://10.0.0.1:2379'],
    tlsSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:etcd-remediator/prod-eu-1-AbCdEf',
    members: [{ memberName: 'prod-eu-1-cp-a', instanceId: 'i-0a1b2c3d4e5f60718', nodeName: 'prod-eu-1-cp-a' }],
  });
  // As the stack sets them on the function, with the endpoints pointed at the fakes.
  Object.assign(lambdaEnv, {
    TABLE_NAME: tableName,
    BUS_NAME: 'remediation',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(secrets.address() as AddressInfo).port}`,
  });
  for (const [name, value] of Object.entries(lambdaEnv)) process.env[name] = value;
  ({ handler } = await import('../../../functions/intake/lambda.ts'));
});

afterAll(async () => {
  for (const name of Object.keys(lambdaEnv)) {
    if (before[name] === undefined) delete process.env[name];
    else process.env[name] = before[name];
  }
  await Promise.all([dynamo?.close(), bus?.close(), new Promise((resolve) => secrets?.close(resolve))]);
});

it('an EC2 instance of a registered member stopping: one MemberUnhealthy for that member on our bus', async () => {
  const result = await handler(sample('ec2-instance-state-change'), localContext('intake'));
  expect(result.deadLetters).toEqual([]);
  const entries = bus.calls.flatMap((c) => c.entries);
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatchObject({ Source: EVENT_SOURCE, DetailType: 'MemberUnhealthy', EventBusName: 'remediation' });
  expect(JSON.parse(entries[0]!.Detail!)).toMatchObject({ clusterId: 'prod-eu-1', target: { memberName: 'prod-eu-1-cp-a' }, source: 'ec2' });
});

it('a machine nobody registered: a dead letter in the table, nothing on the bus', async () => {
  const before = bus.calls.length;
  const health = sample('aws-health-event');
  const event = { ...health, resources: [], detail: { ...health.detail, affectedEntities: [{ entityValue: 'i-0fedcba9876543210' }] } };
  const result = await handler(event, localContext('intake'));
  expect(bus.calls).toHaveLength(before);
  const store = createDynamoIncidentStore({ client: dynamo.client(), tableName });
  const [dead] = await store.listDeadLetters();
  expect(dead).toMatchObject({ id: result.deadLetters[0]!.id, source: 'intake', detailType: 'AWS Health Event', payload: JSON.stringify(event) });
  expect(dead!.error).toBe('instanceId i-0fedcba9876543210 is not registered in the cluster directory: no etcd member is known to run on it');
});

it("a MemberUnhealthy naming a registered cluster: published, the cluster known from its entry's key alone, its secrets never read", async () => {
  const before = bus.calls.length;
  const report = sample('member-unhealthy');
  const event = { ...report, detail: { ...report.detail, clusterId: 'prod-eu-1', target: { memberName: 'prod-eu-1-cp-a' } } };
  const result = await handler(event, localContext('intake'));
  expect(result.deadLetters).toEqual([]);
  expect(result.published).toMatchObject([{ clusterId: 'prod-eu-1', target: { memberName: 'prod-eu-1-cp-a' } }]);
  expect(bus.calls.slice(before).flatMap((c) => c.entries.map((e) => e.DetailType))).toEqual(['MemberUnhealthy']);
  expect(secretRequests).toBe(0);
});
