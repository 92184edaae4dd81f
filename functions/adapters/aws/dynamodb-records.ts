// The store's small records on DynamoDB: the cluster lock (a lease), cluster identities, dead
// letters and the remediation ledger. Each is one conditional write where sqlite has one statement.
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { remediationHistoryFrom, type RemediationHistory } from '../../core/removal/index.ts';
import type { RemovalRecord } from '../../core/replacement/index.ts';
import { sameSightings } from '../../core/learners/index.ts';
import type { DeadLetter, DeadLetterInput } from '../../ports/incident-store.ts';
import { decodeText, encodeText, num, str, type Item } from './dynamodb-codec.ts';
import { conditionally, expiresIn, queryAll, type StoreContext } from './dynamodb-context.ts';
import {
  DEAD_LETTERS_PK,
  deadLetterCounterKey,
  deadLetterKey,
  identityKey,
  learnerSightingsKey,
  lockKey,
  remediationKey,
  removalsKey,
  remediationsPk,
} from './dynamodb-keys.ts';
import { table } from './dynamodb-table.ts';

const DAY_MS = 86_400_000;
const notExists = `attribute_not_exists(${table.partitionKey.name})`;

/** Take a free lock, renew our own, or take one whose lease ran out; anything else writes nothing. */
export async function acquireLock(ctx: StoreContext, clusterId: string, owner: string, leaseMs: number, now: number): Promise<boolean> {
  if (!(leaseMs > 0)) throw new RangeError(`lease must be positive, got ${leaseMs}`);
  return conditionally(() =>
    ctx.doc.send(
      new PutCommand({
        TableName: ctx.tableName,
        // The TTL only tidies a lock nobody released; the lease is leaseUntil, in the caller's time.
        Item: { ...lockKey(clusterId), type: 'lock', clusterId, owner, leaseUntil: now + leaseMs, [table.ttlAttribute]: expiresIn(ctx, leaseMs + DAY_MS) },
        ConditionExpression: `${notExists} OR #owner = :owner OR leaseUntil <= :now`,
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner, ':now': now },
      }),
    ),
  );
}

export async function releaseLock(ctx: StoreContext, clusterId: string, owner: string): Promise<boolean> {
  return conditionally(() =>
    ctx.doc.send(
      new DeleteCommand({
        TableName: ctx.tableName,
        Key: lockKey(clusterId),
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner },
      }),
    ),
  );
}

/** A single-remediator cluster's removal record: one item, written whole by the lock holder. */
export async function removalRecords(ctx: StoreContext, clusterId: string): Promise<RemovalRecord[]> {
  const { Item: item } = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: removalsKey(clusterId), ConsistentRead: true }));
  return item ? (JSON.parse(str(item, 'records')) as RemovalRecord[]) : [];
}

export async function saveRemovalRecords(ctx: StoreContext, clusterId: string, records: RemovalRecord[]): Promise<void> {
  await ctx.doc.send(
    new PutCommand({ TableName: ctx.tableName, Item: { ...removalsKey(clusterId), type: 'removals', clusterId, records: JSON.stringify(records) } }),
  );
}

/** Writers that race on one cluster's sightings: each round one wins, so this many always do. */
const SIGHTINGS_WRITES = 20;

async function readSightings(ctx: StoreContext, clusterId: string): Promise<{ seen: Record<string, number>; version: number } | undefined> {
  const { Item: item } = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: learnerSightingsKey(clusterId), ConsistentRead: true }));
  return item && { seen: sightingsOf(item), version: num(item, 'version') };
}

function sightingsOf(item: Item): Record<string, number> {
  const seen = item.seen;
  if (typeof seen !== 'object' || seen === null) throw new Error(`item ${String(item.pk)}: seen is not a map`);
  return Object.fromEntries(Object.entries(seen).map(([id, at]) => [id, Number(at)]));
}

export async function learnerSightings(ctx: StoreContext, clusterId: string): Promise<Record<string, number>> {
  return (await readSightings(ctx, clusterId))?.seen ?? {};
}

/**
 * One item per cluster, written whole under its version: a writer that lost the race reads the
 * record again and keeps each member's earlier time, so no sighting resets a clock.
 */
export async function saveLearnerSightings(ctx: StoreContext, clusterId: string, seen: Readonly<Record<string, number>>): Promise<Record<string, number>> {
  for (let write = 0; write < SIGHTINGS_WRITES; write++) {
    const stored = await readSightings(ctx, clusterId);
    const merged = Object.fromEntries(Object.entries(seen).map(([id, at]) => [id, Math.min(at, stored?.seen[id] ?? at)]));
    if (stored && sameSightings(stored.seen, merged)) return merged;
    const version = (stored?.version ?? 0) + 1;
    const wrote = await conditionally(() =>
      ctx.doc.send(
        new PutCommand({
          TableName: ctx.tableName,
          Item: { ...learnerSightingsKey(clusterId), type: 'learner-sightings', clusterId, seen: merged, version },
          ConditionExpression: stored ? 'version = :version' : notExists,
          ...(stored ? { ExpressionAttributeValues: { ':version': stored.version } } : {}),
        }),
      ),
    );
    if (wrote) return merged;
  }
  throw new Error(`cluster ${clusterId}: learner sightings not written, ${SIGHTINGS_WRITES} other writers came first`);
}

export async function knownIdentity(ctx: StoreContext, clusterId: string): Promise<{ etcdClusterId: string; since: number } | undefined> {
  const { Item: item } = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: identityKey(clusterId), ConsistentRead: true }));
  return item && { etcdClusterId: str(item, 'etcdClusterId'), since: num(item, 'since') };
}

/** First write wins; returns what is remembered now. */
export async function rememberIdentity(
  ctx: StoreContext,
  clusterId: string,
  etcdClusterId: string,
  at: number,
): Promise<{ etcdClusterId: string; since: number }> {
  const wrote = await conditionally(() =>
    ctx.doc.send(
      new PutCommand({
        TableName: ctx.tableName,
        Item: { ...identityKey(clusterId), type: 'identity', clusterId, etcdClusterId, since: at },
        ConditionExpression: notExists,
      }),
    ),
  );
  if (wrote) return { etcdClusterId, since: at };
  const known = await knownIdentity(ctx, clusterId);
  if (!known) throw new Error(`cluster ${clusterId}: identity neither written nor found`);
  return known;
}

/** In the order received: a counter gives each letter its place, since receivedAt may go backwards. */
export async function putDeadLetter(ctx: StoreContext, input: DeadLetterInput): Promise<DeadLetter> {
  const letter: DeadLetter = { id: randomUUID(), ...input };
  const { Attributes: counter } = await ctx.doc.send(
    new UpdateCommand({
      TableName: ctx.tableName,
      Key: deadLetterCounterKey,
      UpdateExpression: 'ADD seq :one',
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const seq = num(counter!, 'seq');
  await ctx.doc.send(
    new PutCommand({
      TableName: ctx.tableName,
      Item: {
        ...deadLetterKey(seq),
        type: 'dead-letter',
        ...letter,
        payload: encodeText(letter.payload),
        [table.ttlAttribute]: expiresIn(ctx, ctx.finishedTtlMs),
      },
    }),
  );
  return letter;
}

export async function listDeadLetters(ctx: StoreContext): Promise<DeadLetter[]> {
  const items = await queryAll(ctx, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': DEAD_LETTERS_PK }, ConsistentRead: true });
  return items.map((item) => ({
    id: str(item, 'id'),
    receivedAt: num(item, 'receivedAt'),
    source: str(item, 'source'),
    detailType: str(item, 'detailType'),
    payload: decodeText(item, 'payload'),
    error: str(item, 'error'),
  }));
}

/** Idempotent: the same (cluster, target, at) is the same item. */
export async function recordRemediation(ctx: StoreContext, clusterId: string, targetKey: string, at: number): Promise<void> {
  await ctx.doc.send(
    new PutCommand({ TableName: ctx.tableName, Item: { ...remediationKey(clusterId, targetKey, at), type: 'remediation', clusterId, targetKey, at } }),
  );
}

export async function remediationHistory(
  ctx: StoreContext,
  clusterId: string,
  targetKey: string,
  options: { minHealthyPeriodMs: number; now: number },
): Promise<RemediationHistory> {
  const items = await queryAll(ctx, {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': remediationsPk(clusterId, targetKey) },
    ConsistentRead: true,
  });
  return remediationHistoryFrom(
    items.map((item) => num(item, 'at')).sort((a, b) => a - b),
    options,
  );
}
