// What every part of the DynamoDB store shares: the document client, the table, the clock for
// TTLs, and the few request shapes they all use (paged queries, batched consistent reads).
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { handleWhenResult, retry } from 'cockatiel';
import { doublingBackoff } from '../../lib/doubling-backoff.ts';
import type { Item } from './dynamodb-codec.ts';
import type { Key } from './dynamodb-keys.ts';

export interface StoreContext {
  doc: DynamoDBDocumentClient;
  tableName: string;
  /** Epoch ms; TTLs are reckoned from it, never from the callers' `now` (tests pass small numbers). */
  clock: () => number;
  /** How long a finished item is kept, in ms. */
  finishedTtlMs: number;
}

/** The TTL attribute's value for an item kept `ms` from now: epoch seconds. */
export const expiresIn = (ctx: StoreContext, ms: number): number => Math.ceil((ctx.clock() + ms) / 1000);

export const isConditionFailed = (error: unknown): boolean =>
  error instanceof ConditionalCheckFailedException || (error instanceof Error && error.name === 'ConditionalCheckFailedException');

/** Runs a conditional write; false when its condition did not hold, any other error thrown. */
export async function conditionally(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
}

/** Every page of a query. */
export async function queryAll(
  ctx: Pick<StoreContext, 'doc' | 'tableName'>,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ctx.doc.send(new QueryCommand({ ...input, TableName: ctx.tableName, ...(start ? { ExclusiveStartKey: start } : {}) }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

const BATCH_GET_MAX = 100;
const BATCH_GET_CALLS = 10;
/**
 * Unprocessed keys mean throttling: asked again after 50 ms, then twice as long each time, until
 * none are left or the tenth call still leaves some (about 25 s of waits in all, none after it).
 */
const untilProcessed = retry(
  handleWhenResult((left) => typeof left === 'number' && left > 0),
  { maxAttempts: BATCH_GET_CALLS - 1, backoff: doublingBackoff(50, 15_000) },
);

/** Strongly consistent reads of many items; missing ones are simply absent. */
export async function batchGet(ctx: StoreContext, keys: Key[]): Promise<Item[]> {
  const items: Item[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_MAX) {
    let pending: Record<string, unknown>[] = keys.slice(i, i + BATCH_GET_MAX);
    const left = await untilProcessed.execute(async () => {
      const result = await ctx.doc.send(new BatchGetCommand({ RequestItems: { [ctx.tableName]: { Keys: pending, ConsistentRead: true } } }));
      items.push(...(result.Responses?.[ctx.tableName] ?? []));
      pending = result.UnprocessedKeys?.[ctx.tableName]?.Keys ?? [];
      return pending.length;
    });
    if (left > 0) throw new Error(`table ${ctx.tableName}: ${left} keys still unprocessed after ${BATCH_GET_CALLS} BatchGetItem calls`);
  }
  return items;
}
