// The store's small records on DynamoDB: the cluster lock (a lease), cluster identities, dead
// letters and the remediation ledger. Each is one conditional write where sqlite has one statement.
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { remediationHistoryFrom, type RemediationHistory } from '../../core/remediation-history.ts';
import type { RemovalRecord } from '../../core/replacement.ts';
import type { DeadLetter, DeadLetterInput } from '../../ports/incident-store.ts';
import { decodeText, encodeText, num, str } from './dynamodb-codec.ts';
import { conditionally, expiresIn, queryAll, type StoreContext } from './dynamodb-context.ts';
import {
  DEAD_LETTERS_PK,
  deadLetterCounterKey,
  deadLetterKey,
  identityKey,
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
  await ctx.doc.send(new PutCommand({ TableName: ctx.tableName, Item: { ...removalsKey(clusterId), type: 'removals', clusterId, records: JSON.stringify(records) } }));
}

export async function knownIdentity(ctx: StoreContext, clusterId: string): Promise<{ etcdClusterId: string; since: number } | undefined> {
  const { Item: item } = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: identityKey(clusterId), ConsistentRead: true }));
  return item && { etcdClusterId: str(item, 'etcdClusterId'), since: num(item, 'since') };
}

/** First write wins; returns what is remembered now. */
export async function rememberIdentity(ctx: StoreContext, clusterId: string, etcdClusterId: string, at: number): Promise<{ etcdClusterId: string; since: number }> {
  const wrote = await conditionally(() =>
    ctx.doc.send(
      new PutCommand({ TableName: ctx.tableName, Item: { ...identityKey(clusterId), type: 'identity', clusterId, etcdClusterId, since: at }, ConditionExpression: notExists }),
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
    new UpdateCommand({ TableName: ctx.tableName, Key: deadLetterCounterKey, UpdateExpression: 'ADD seq :one', ExpressionAttributeValues: { ':one': 1 }, ReturnValues: 'UPDATED_NEW' }),
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
  await ctx.doc.send(new PutCommand({ TableName: ctx.tableName, Item: { ...remediationKey(clusterId, targetKey, at), type: 'remediation', clusterId, targetKey, at } }));
}

export async function remediationHistory(
  ctx: StoreContext,
  clusterId: string,
  targetKey: string,
  options: { minHealthyPeriodMs: number; now: number },
): Promise<RemediationHistory> {
  const items = await queryAll(ctx, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': remediationsPk(clusterId, targetKey) }, ConsistentRead: true });
  return remediationHistoryFrom(items.map((item) => num(item, 'at')).sort((a, b) => a - b), options);
}
