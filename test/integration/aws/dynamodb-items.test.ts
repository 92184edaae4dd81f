// What the DynamoDB store leaves in its table, read raw on dynalite: the table as defined, TTLs on
// finished items only where they belong, large fields compressed, and recovery from a writer that
// died between two writes of openOrJoin or of a close.
import { randomBytes } from 'node:crypto';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hygieneRecordKey, incidentKey, lockKey, openPointerKey } from '../../../functions/adapters/aws/dynamodb-keys.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { table } from '../../../functions/adapters/aws/dynamodb-table.ts';
import { hygieneRecordText } from '../../../functions/core/hygiene/hygiene-record-stored.ts';
import type { IncidentStore } from '../../../functions/ports/incident-store.ts';
import { realisticHygieneRecord, tinyHygieneRecord } from '../../support/hygiene-record-sample.ts';
import { sampleLine } from '../../support/journal-lines.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { view } from '../../support/store-contract.ts';

type Item = Record<string, unknown>;
const DAY_S = 86_400;
/** The store's clock, fixed: TTLs are reckoned from it. */
const CLOCK_MS = 1_750_000_000_000;
const clockS = CLOCK_MS / 1000;

let dynamo: Dynalite;
let doc: DynamoDBDocumentClient;
beforeAll(async () => {
  dynamo = await startDynalite();
  doc = DynamoDBDocumentClient.from(dynamo.client());
});
afterAll(async () => {
  await dynamo.close();
});

describe('dynamodb store: items in the table', () => {
  let tableName: string;
  let store: IncidentStore;
  const open = (targetKey = 'memberName=etcd-0', now = 1_000) =>
    store.openOrJoin({ clusterId: 'c1', targetKey, target: { memberName: 'etcd-0' }, reason: 'r', now });
  const get = async (key: { pk: string; sk: string }): Promise<Item | undefined> =>
    (await doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
  const partition = async (pk: string): Promise<Item[]> =>
    (
      await doc.send(
        new QueryCommand({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }),
      )
    ).Items ?? [];

  beforeEach(async () => {
    tableName = await dynamo.createTable();
    store = createDynamoIncidentStore({ client: dynamo.client(), tableName, clock: () => CLOCK_MS });
  });

  it('the table has the keys and indexes of the one definition', async () => {
    const { Table: described } = await dynamo.client().send(new DescribeTableCommand({ TableName: tableName }));
    expect(described?.KeySchema).toEqual([
      { AttributeName: table.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: table.sortKey.name, KeyType: 'RANGE' },
    ]);
    expect(described?.GlobalSecondaryIndexes?.map((i) => [i.IndexName, i.KeySchema?.map((k) => k.AttributeName), i.Projection?.ProjectionType])).toEqual(
      table.globalSecondaryIndexes.map((i) => [i.indexName, [i.partitionKey.name, i.sortKey.name], 'ALL']),
    );
  });

  it('an open incident and its journal carry no finished TTL; closing sets one on the incident and every line, and drops the pointer', async () => {
    const { incident } = await open();
    await store.appendJournal(incident.incidentId, { at: 1, ...sampleLine('probed') });
    await store.markStep(incident.incidentId, { at: 2, ...sampleLine('lock-taken') });
    expect((await get(incidentKey(incident.incidentId)))?.[table.ttlAttribute]).toBeUndefined();
    expect(await get(openPointerKey('c1', 'memberName=etcd-0'))).toMatchObject({ incidentId: incident.incidentId });
    // Lines of an open incident expire only well after the retention, should no close ever come.
    for (const line of (await partition(`incident#${incident.incidentId}`)).filter((i) => i.sk !== 'incident')) {
      expect(line[table.ttlAttribute]).toBe(clockS + 120 * DAY_S);
    }
    await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: null, now: 3 });
    await store.appendJournal(incident.incidentId, { at: 4, ...sampleLine('late-duplicate') });
    const items = await partition(`incident#${incident.incidentId}`);
    expect(items.map((i) => i.sk)).toEqual(['incident', 'journal#000000000001', 'journal#000000000003', 'marker#lock-taken']);
    for (const item of items) expect(item[table.ttlAttribute]).toBe(clockS + 90 * DAY_S);
    expect(await get(openPointerKey('c1', 'memberName=etcd-0'))).toBeUndefined();
  });

  it('a close through a patch expires the incident too; finishedTtlDays sets how long', async () => {
    store = createDynamoIncidentStore({ client: dynamo.client(), tableName, clock: () => CLOCK_MS, finishedTtlDays: 7 });
    const { incident } = await open();
    await store.updateIncident(incident.incidentId, { state: 'blocked' }, { expectVersion: 1, now: 2 });
    expect(await get(incidentKey(incident.incidentId))).toMatchObject({
      state: 'blocked',
      gsi1pk: 'incidents#blocked',
      [table.ttlAttribute]: clockS + 7 * DAY_S,
    });
    expect(() => createDynamoIncidentStore({ client: dynamo.client(), tableName, finishedTtlDays: 0 })).toThrow(RangeError);
  });

  it('dead letters expire; a lock nobody released is tidied a day after its lease', async () => {
    await store.putDeadLetter({ receivedAt: 1, source: 's', detailType: 'd', payload: 'p', error: 'e' });
    expect((await partition('deadletters'))[0]?.[table.ttlAttribute]).toBe(clockS + 90 * DAY_S);
    await store.acquireLock('c1', 'a', 30_000, 5);
    expect(await get(lockKey('c1'))).toMatchObject({ owner: 'a', leaseUntil: 30_005, [table.ttlAttribute]: clockS + 30 + DAY_S });
  });

  it('large views and outboxes are stored gzipped, small ones as readable JSON', async () => {
    const { incident } = await open();
    const big = Array.from({ length: 10 }, (_, i) => view(i, `etcd-${i} ${'x'.repeat(2_000)}`));
    await store.updateIncident(incident.incidentId, { views: big, outbox: [] }, { expectVersion: 1, now: 2 });
    const item = await get(incidentKey(incident.incidentId));
    expect(item?.views).toBeInstanceOf(Uint8Array);
    expect(typeof item?.outbox).toBe('string');
    expect((item!.views as Uint8Array).byteLength).toBeLessThan(8 * 1024);
  });

  it("a cluster's hygiene record is one item of JSON text under its version, gzipped when large, far under the 400 KB limit", async () => {
    await store.saveHygieneRecord('c1', tinyHygieneRecord(), 0);
    const small = await get(hygieneRecordKey('c1'));
    expect(small).toMatchObject({ pk: 'hygiene#c1', sk: 'record', type: 'hygiene-record', clusterId: 'c1', version: 1, updatedAt: CLOCK_MS });
    expect(small?.record).toBe(hygieneRecordText(tinyHygieneRecord()));
    await store.saveHygieneRecord('c1', realisticHygieneRecord(), 1);
    const large = await get(hygieneRecordKey('c1'));
    expect(large?.version).toBe(2);
    expect(large?.record).toBeInstanceOf(Uint8Array);
    // Five members' 25 samples and last scrapes: about 66 KB of JSON, were nothing compressed.
    const jsonBytes = Buffer.byteLength(hygieneRecordText(realisticHygieneRecord()));
    const storedBytes = (large!.record as Uint8Array).byteLength;
    if (process.env.SHOW_SIZES) console.log('hygiene record JSON bytes', jsonBytes, 'stored', storedBytes);
    expect(jsonBytes).toBeGreaterThan(8 * 1024);
    expect(jsonBytes).toBeLessThan(100 * 1024);
    expect(storedBytes).toBeLessThan(jsonBytes / 4);
  });

  it('an update too large even compressed is refused naming the incident, and changes nothing', async () => {
    const { incident } = await open();
    // Random text hardly compresses (base64 to about 3/4). Older views past the history's byte
    // budget are dropped, but the newest is always kept: one view of 600 KB passes the limit alone.
    const views = [view(0, randomBytes(450_000).toString('base64'))];
    await expect(store.updateIncident(incident.incidentId, { views }, { expectVersion: 1, now: 2 })).rejects.toThrow(
      `incident ${incident.incidentId}: the update would pass DynamoDB's 400 KB item limit`,
    );
    expect(await store.getIncident(incident.incidentId)).toEqual(incident);
  });

  it('a pointer whose creator died before writing the incident: the next report creates that incident and joins it', async () => {
    const pointer = {
      ...openPointerKey('c1', 'memberName=etcd-0'),
      type: 'open-pointer',
      incidentId: 'orphan',
      clusterId: 'c1',
      targetKey: 'memberName=etcd-0',
      target: '{"memberName":"etcd-0"}',
      reason: 'first',
      openedAt: 500,
      createdAt: CLOCK_MS - 1_000,
    };
    await doc.send(new PutCommand({ TableName: tableName, Item: pointer }));
    // Not yet an incident anywhere: no list shows it.
    expect(await store.listIncidents({ clusterId: 'c1', state: 'open' })).toEqual([]);
    const joined = await open('memberName=etcd-0', 2_000);
    expect(joined.joined).toBe(true);
    expect(joined.incident).toMatchObject({
      incidentId: 'orphan',
      reason: 'first',
      openedAt: 500,
      state: 'open',
      version: 1,
      target: { memberName: 'etcd-0' },
    });
    expect(await store.listIncidents({ clusterId: 'c1', state: 'open' })).toEqual([joined.incident]);
  });

  it('a pointer left behind by a close whose writer died: the next report opens a new incident', async () => {
    const { incident } = await open();
    await store.closeIncident(incident.incidentId, { outcome: 'failed', result: null, now: 2 });
    // Put the pointer back, as if the close had not got to deleting it.
    const pointer = {
      ...openPointerKey('c1', 'memberName=etcd-0'),
      type: 'open-pointer',
      incidentId: incident.incidentId,
      clusterId: 'c1',
      targetKey: 'memberName=etcd-0',
      target: '{}',
      reason: 'r',
      openedAt: 1_000,
      createdAt: CLOCK_MS,
    };
    await doc.send(new PutCommand({ TableName: tableName, Item: pointer }));
    expect(await store.listIncidents({ clusterId: 'c1', state: 'open' })).toEqual([]);
    const next = await open('memberName=etcd-0', 3);
    expect(next.joined).toBe(false);
    expect(next.incident.incidentId).not.toBe(incident.incidentId);
    expect(await get(openPointerKey('c1', 'memberName=etcd-0'))).toMatchObject({ incidentId: next.incident.incidentId });
  });

  it('a pointer older than the retention whose incident TTL removed is cleared, never revived', async () => {
    const { incident } = await open();
    await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: null, now: 2 });
    const stale = {
      ...openPointerKey('c1', 'memberName=etcd-0'),
      type: 'open-pointer',
      incidentId: incident.incidentId,
      clusterId: 'c1',
      targetKey: 'memberName=etcd-0',
      target: '{}',
      reason: 'r',
      openedAt: 1_000,
      createdAt: CLOCK_MS - 91 * DAY_S * 1000,
    };
    await doc.send(new PutCommand({ TableName: tableName, Item: stale }));
    await doc.send(new DeleteCommand({ TableName: tableName, Key: incidentKey(incident.incidentId) }));
    const next = await open('memberName=etcd-0', 3);
    expect(next.joined).toBe(false);
    expect(next.incident.incidentId).not.toBe(incident.incidentId);
    expect(await store.getIncident(incident.incidentId)).toBeUndefined();
  });

  it('one caller-chosen id raced for two targets: only the winning target keeps a pointer', async () => {
    const other = createDynamoIncidentStore({ client: dynamo.client(), tableName, clock: () => CLOCK_MS });
    await Promise.allSettled([
      store.openOrJoin({ clusterId: 'c4', targetKey: 'memberName=a', target: {}, reason: 'r', now: 1, incidentId: 'shared' }),
      other.openOrJoin({ clusterId: 'c4', targetKey: 'memberName=b', target: {}, reason: 'r', now: 1, incidentId: 'shared' }),
    ]);
    const winner = (await store.getIncident('shared'))?.targetKey;
    expect((await partition('open#c4')).map((p) => [p.sk, p.incidentId])).toEqual([[winner, 'shared']]);
  });

  it('closing again finishes what a dead closer left: the pointer goes', async () => {
    const { incident } = await open();
    await store.closeIncident(incident.incidentId, { outcome: 'failed', result: null, now: 2 });
    const pointer = {
      ...openPointerKey('c1', 'memberName=etcd-0'),
      type: 'open-pointer',
      incidentId: incident.incidentId,
      clusterId: 'c1',
      targetKey: 'memberName=etcd-0',
      target: '{}',
      reason: 'r',
      openedAt: 1_000,
      createdAt: CLOCK_MS,
    };
    await doc.send(new PutCommand({ TableName: tableName, Item: pointer }));
    await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: null, now: 3 });
    expect(await get(openPointerKey('c1', 'memberName=etcd-0'))).toBeUndefined();
  });
});
