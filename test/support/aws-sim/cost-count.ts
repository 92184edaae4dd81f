// Counting what one incident costs on the deployed-stack sim, the figures AWS bills by: Lambda
// invocations per function (every try), events put by detail type, short waits (SQS sends),
// schedules created, and DynamoDB writes with the size of each item written. Sizes are read off
// the wire as DynamoDB counts them (attribute names and values); an UpdateItem is billed on the
// whole item, so its size is the item's as it stands after the incident (an upper bound for an
// item that grew).
import { GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DeployedStack } from './deployed-stack.ts';

/** Where each of the stack's records stood when the incident started. */
export interface CostMarks {
  invocations: number;
  accepted: number;
  sqs: number;
  scheduler: number;
  dynamo: number;
}

export interface IncidentCost {
  invocations: Record<string, number>;
  events: Record<string, number>;
  shortWaits: number;
  schedules: number;
  dynamoWrites: { count: number; byOperation: Record<string, number>; itemBytes: number[]; writeUnits: number };
}

export const marksOf = (stack: DeployedStack): CostMarks => ({
  invocations: stack.invocations.length,
  accepted: stack.eventBridge.accepted.length,
  sqs: stack.sqs.sent.length,
  scheduler: stack.scheduler.requests.length,
  dynamo: stack.dynamo.length,
});

const tally = (keys: string[]): Record<string, number> => keys.reduce<Record<string, number>>((n, k) => ({ ...n, [k]: (n[k] ?? 0) + 1 }), {});

/** An item's size as DynamoDB counts it: names and values in UTF-8, binary as raw bytes, a number about 21. */
export function itemBytes(item: Record<string, AttributeValue | WireValue>): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

/** AttributeValue as JSON on the wire: binary in base64. */
type WireValue = {
  S?: string;
  N?: string;
  B?: string | Uint8Array;
  BOOL?: boolean;
  NULL?: boolean;
  M?: Record<string, WireValue>;
  L?: WireValue[];
  SS?: string[];
  NS?: string[];
};

function valueBytes(value: AttributeValue | WireValue): number {
  const v: WireValue = value;
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return 21;
  if (v.B !== undefined) return typeof v.B === 'string' ? Buffer.from(v.B, 'base64').length : v.B.length;
  if (v.M !== undefined) return 3 + itemBytes(v.M);
  if (v.L !== undefined) return 3 + v.L.reduce((sum, x) => sum + 1 + valueBytes(x), 0);
  if (v.SS !== undefined) return v.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (v.NS !== undefined) return 21 * v.NS.length;
  return 1;
}

/** One written item: its operation, its key or whole item as sent, and whether a transaction wrote it (billed twice). */
interface Written {
  operation: string;
  table: string;
  item?: Record<string, WireValue>;
  key?: Record<string, WireValue>;
  transactional: boolean;
}

function writesOf(operation: string, request: string): Written[] {
  const body = JSON.parse(request || '{}') as Record<string, unknown>;
  const table = typeof body.TableName === 'string' ? body.TableName : '';
  switch (operation) {
    case 'PutItem':
      return [{ operation, table, item: body.Item as Record<string, WireValue>, transactional: false }];
    case 'UpdateItem':
    case 'DeleteItem':
      return [{ operation, table, key: body.Key as Record<string, WireValue>, transactional: false }];
    case 'TransactWriteItems':
      return ((body.TransactItems ?? []) as Record<string, { TableName: string; Item?: Record<string, WireValue>; Key?: Record<string, WireValue> }>[]).flatMap(
        (t) =>
          Object.entries(t)
            .filter(([kind]) => kind !== 'ConditionCheck')
            .map(([kind, w]) => ({ operation: `Transact${kind}`, table: w.TableName, ...(w.Item ? { item: w.Item } : { key: w.Key }), transactional: true })),
      );
    case 'BatchWriteItem':
      return Object.entries(
        (body.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Record<string, WireValue> }; DeleteRequest?: { Key: Record<string, WireValue> } }[]>,
      ).flatMap(([name, requests]) =>
        requests.map((r) =>
          r.PutRequest
            ? { operation: 'BatchPut', table: name, item: r.PutRequest.Item, transactional: false }
            : { operation: 'BatchDelete', table: name, key: r.DeleteRequest?.Key, transactional: false },
        ),
      );
    default:
      return [];
  }
}

/** What the incident cost since `marks`, its updated items read back for their size. */
export async function costSince(stack: DeployedStack, marks: CostMarks): Promise<IncidentCost> {
  const writes = stack.dynamo
    .slice(marks.dynamo)
    .filter((x) => x.status === 200)
    .flatMap((x) => writesOf(x.operation, x.request));
  const client = stack.dynalite.client();
  const sizes: number[] = [];
  let writeUnits = 0;
  for (const w of writes) {
    let bytes = w.item ? itemBytes(w.item) : 0;
    if (!w.item && w.key && !w.operation.endsWith('Delete') && w.operation !== 'DeleteItem') {
      const got = await client.send(new GetItemCommand({ TableName: w.table, Key: w.key as Record<string, AttributeValue> }));
      bytes = got.Item ? itemBytes(got.Item) : itemBytes(w.key);
    } else if (!w.item && w.key) bytes = itemBytes(w.key);
    sizes.push(bytes);
    // A write unit per started KB; a transaction's writes cost two.
    writeUnits += Math.max(1, Math.ceil(bytes / 1024)) * (w.transactional ? 2 : 1);
  }
  client.destroy();
  const events = stack.eventBridge.accepted.slice(marks.accepted).map((e) => e.event['detail-type']);
  return {
    invocations: tally(stack.invocations.slice(marks.invocations).map((i) => i.functionName)),
    events: tally(events),
    shortWaits: stack.sqs.sent.length - marks.sqs,
    schedules: stack.scheduler.requests.slice(marks.scheduler).filter((r) => r.operation === 'CreateSchedule').length,
    dynamoWrites: { count: writes.length, byOperation: tally(writes.map((w) => w.operation)), itemBytes: sizes, writeUnits },
  };
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((n, c) => n + c, 0);
const listed = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

/** The counts as lines for a person: one a kind. */
export function describeCost(cost: IncidentCost): string[] {
  const sizes = cost.dynamoWrites.itemBytes;
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  return [
    `invocations ${total(cost.invocations)}: ${listed(cost.invocations)}`,
    `events ${total(cost.events)}: ${listed(cost.events)}`,
    `short waits (SQS sends) ${cost.shortWaits}; schedules created ${cost.schedules}`,
    `DynamoDB writes ${cost.dynamoWrites.count} (${listed(cost.dynamoWrites.byOperation)}), ${cost.dynamoWrites.writeUnits} write units; ` +
      `item sizes: ${sizes.filter((b) => b <= 1024).length} ≤ 1 KB, ${sizes.filter((b) => b > 1024 && b <= 4096).length} in 1–4 KB, ${sizes.filter((b) => b > 4096).length} over 4 KB (largest ${kb(Math.max(0, ...sizes))})`,
  ];
}
