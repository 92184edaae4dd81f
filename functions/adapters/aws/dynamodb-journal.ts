// The journal on DynamoDB: lines and step markers live in their incident's partition. Order comes
// from a counter on the incident item (one atomic ADD), which also proves the incident exists, as
// sqlite's foreign key does. A marker's key is its step, so a conditional put makes the first win.
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { IncidentNotFoundError, type JournalEntry, type JournalInput, type MarkerStep } from '../../ports/incident-store.ts';
import { decodeJson, encodeJson, num, str, type Item } from './dynamodb-codec.ts';
import { conditionally, expiresIn, isConditionFailed, queryAll, type StoreContext } from './dynamodb-context.ts';
import { INCIDENT_SK, incidentKey, journalKey, markerKey } from './dynamodb-keys.ts';
import { table } from './dynamodb-table.ts';

/**
 * A line written while its incident is open expires this long after the finished-item retention,
 * should the close that sets its real TTL never happen: no line outlives its purpose for good.
 */
const OPEN_LINE_MARGIN_MS = 30 * 86_400_000;

export async function appendJournal(ctx: StoreContext, incidentId: string, entry: JournalInput): Promise<void> {
  const { seq, open } = await nextSeq(ctx, incidentId);
  await ctx.doc.send(new PutCommand({ TableName: ctx.tableName, Item: lineItem(ctx, journalKey(incidentId, seq), entry, seq, open, false) }));
}

/** True only for the call whose put created the marker. */
export async function markStep(ctx: StoreContext, incidentId: string, entry: JournalInput & { step: MarkerStep }): Promise<boolean> {
  const { seq, open } = await nextSeq(ctx, incidentId);
  const key = markerKey(incidentId, entry.step);
  return conditionally(() =>
    ctx.doc.send(
      new PutCommand({
        TableName: ctx.tableName,
        Item: lineItem(ctx, key, entry, seq, open, true),
        ConditionExpression: `attribute_not_exists(${table.partitionKey.name})`,
      }),
    ),
  );
}

export async function stepDone(ctx: StoreContext, incidentId: string, step: MarkerStep): Promise<boolean> {
  const { Item: item } = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: markerKey(incidentId, step), ConsistentRead: true }));
  return item !== undefined;
}

/** Lines and markers, in the order their sequence numbers were taken. */
export async function journal(ctx: StoreContext, incidentId: string): Promise<JournalEntry[]> {
  const items = await lineItems(ctx, incidentId);
  return (
    items
      .sort((a, b) => num(a, 'seq') - num(b, 'seq'))
      // Each line's detail is the fields its step writes (journal.ts), as lineItem stored them.
      .map(
        (item) =>
          ({ at: num(item, 'at'), step: str(item, 'step'), detail: decodeJson(item, 'detail'), isStepMarker: item.isStepMarker === true }) as JournalEntry,
      )
  );
}

/** Every line of a finished incident expires with it. Lines added later get the same TTL as they are written. */
export async function stampJournalTtl(ctx: StoreContext, incidentId: string): Promise<void> {
  const expiresAt = expiresIn(ctx, ctx.finishedTtlMs);
  const items = await lineItems(ctx, incidentId, true);
  for (let i = 0; i < items.length; i += STAMP_CONCURRENCY) {
    await Promise.all(items.slice(i, i + STAMP_CONCURRENCY).map((item) => stamp(ctx, { pk: str(item, 'pk'), sk: str(item, 'sk') }, expiresAt)));
  }
}

const STAMP_CONCURRENCY = 10;

/** Never recreates a line that is gone. */
const stamp = (ctx: StoreContext, key: { pk: string; sk: string }, expiresAt: number): Promise<boolean> =>
  conditionally(() =>
    ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: key,
        UpdateExpression: 'SET #ttl = :ttl',
        ConditionExpression: `attribute_exists(${table.partitionKey.name})`,
        ExpressionAttributeNames: { '#ttl': table.ttlAttribute },
        ExpressionAttributeValues: { ':ttl': expiresAt },
      }),
    ),
  );

/** The incident's partition after its own item: `journal#…` and `marker#…` both sort after `incident`. */
const lineItems = (ctx: StoreContext, incidentId: string, keysOnly = false): Promise<Item[]> =>
  queryAll(ctx, {
    KeyConditionExpression: 'pk = :pk AND sk > :incident',
    ExpressionAttributeValues: { ':pk': incidentKey(incidentId).pk, ':incident': INCIDENT_SK },
    ConsistentRead: true,
    ...(keysOnly ? { ProjectionExpression: 'pk, sk' } : {}),
  });

/** Takes the next sequence number; IncidentNotFoundError when there is no incident to write to. */
async function nextSeq(ctx: StoreContext, incidentId: string): Promise<{ seq: number; open: boolean }> {
  try {
    const { Attributes: updated } = await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: incidentKey(incidentId),
        // `SET #state = #state` only brings the state back with the new number.
        UpdateExpression: 'ADD journalSeq :one SET #state = #state',
        ConditionExpression: `attribute_exists(${table.partitionKey.name})`,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return { seq: num(updated!, 'journalSeq'), open: updated!.state === 'open' };
  } catch (error) {
    if (isConditionFailed(error)) throw new IncidentNotFoundError(incidentId);
    throw error;
  }
}

function lineItem(ctx: StoreContext, key: { pk: string; sk: string }, entry: JournalInput, seq: number, open: boolean, isStepMarker: boolean): Item {
  const item: Item = {
    ...key,
    type: isStepMarker ? 'marker' : 'journal',
    seq,
    at: entry.at,
    step: entry.step,
    isStepMarker,
    [table.ttlAttribute]: expiresIn(ctx, ctx.finishedTtlMs + (open ? OPEN_LINE_MARGIN_MS : 0)),
  };
  if (entry.detail !== undefined) item.detail = encodeJson(entry.detail);
  return item;
}
