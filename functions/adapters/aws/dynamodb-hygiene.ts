// Leader hygiene's record of each cluster on DynamoDB: one item, put whole on condition of the
// version read (for the first, that none is there), read strongly consistent.
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { hygieneRecordFromText, hygieneRecordText, nextHygieneVersion, type HygieneRecord } from '../../core/hygiene/index.ts';
import { HygieneConflictError, type StoredHygiene } from '../../ports/incident-store.ts';
import { decodeText, encodeText, num } from './dynamodb-codec.ts';
import { conditionally, type StoreContext } from './dynamodb-context.ts';
import { hygieneRecordKey } from './dynamodb-keys.ts';
import { table } from './dynamodb-table.ts';

export async function hygieneRecord(ctx: StoreContext, clusterId: string): Promise<StoredHygiene | undefined> {
  const { Item: item } = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: hygieneRecordKey(clusterId), ConsistentRead: true }));
  return item && { record: hygieneRecordFromText(decodeText(item, 'record'), `item ${String(item.pk)}`), version: num(item, 'version') };
}

export async function saveHygieneRecord(ctx: StoreContext, clusterId: string, record: HygieneRecord, expectVersion: number): Promise<number> {
  const version = nextHygieneVersion(expectVersion);
  const wrote = await conditionally(() =>
    ctx.doc.send(
      new PutCommand({
        TableName: ctx.tableName,
        Item: {
          ...hygieneRecordKey(clusterId),
          type: 'hygiene-record',
          clusterId,
          version,
          // JSON text, not a map: the document client would write floats through its own number
          // text, refuse +Inf bounds, and an empty map or list is easy to lose; text reads back
          // exactly. Gzipped above 8 KB (a 5-member cluster's record is some 65 KB of JSON), as
          // each write is billed by the KB.
          record: encodeText(hygieneRecordText(record)),
          updatedAt: ctx.clock(),
        },
        ConditionExpression: expectVersion === 0 ? `attribute_not_exists(${table.partitionKey.name})` : 'version = :expected',
        ...(expectVersion === 0 ? {} : { ExpressionAttributeValues: { ':expected': expectVersion } }),
      }),
    ),
  );
  if (!wrote) throw new HygieneConflictError(clusterId, expectVersion);
  return version;
}
