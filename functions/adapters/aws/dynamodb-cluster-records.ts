// Leader hygiene's and maintenance's records of each cluster on DynamoDB: one item each, put whole
// on condition of the version read (for the first, that none is there), read strongly consistent.
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { hygieneRecordFromText, hygieneRecordText, type HygieneRecord } from '../../core/hygiene/index.ts';
import { maintenanceRecordFromText, maintenanceRecordText, type MaintenanceRecord } from '../../core/maintenance/index.ts';
import { nextRecordVersion } from '../../core/common/index.ts';
import { HygieneConflictError, MaintenanceConflictError, type StoredHygiene, type StoredMaintenance } from '../../ports/incident-store.ts';
import { decodeText, encodeText, num } from './dynamodb-codec.ts';
import { conditionally, type StoreContext } from './dynamodb-context.ts';
import { hygieneRecordKey, maintenanceRecordKey, type Key } from './dynamodb-keys.ts';
import { table } from './dynamodb-table.ts';

async function versionedText(ctx: StoreContext, key: Key): Promise<{ text: string; version: number; where: string } | undefined> {
  const { Item: item } = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: key, ConsistentRead: true }));
  return item && { text: decodeText(item, 'record'), version: num(item, 'version'), where: `item ${String(item.pk)}` };
}

/** Puts `version` when the stored one is `expectVersion` (0: none yet); false when another write came first. */
function saveVersionedText(
  ctx: StoreContext,
  key: Key,
  type: string,
  clusterId: string,
  text: string,
  version: number,
  expectVersion: number,
): Promise<boolean> {
  return conditionally(() =>
    ctx.doc.send(
      new PutCommand({
        TableName: ctx.tableName,
        Item: {
          ...key,
          type,
          clusterId,
          version,
          // JSON text, not a map: the document client would write floats through its own number
          // text, refuse +Inf bounds, and an empty map or list is easy to lose; text reads back
          // exactly. Gzipped above 8 KB (a 5-member cluster's hygiene record is some 65 KB of
          // JSON), as each write is billed by the KB.
          record: encodeText(text),
          updatedAt: ctx.clock(),
        },
        ConditionExpression: expectVersion === 0 ? `attribute_not_exists(${table.partitionKey.name})` : 'version = :expected',
        ...(expectVersion === 0 ? {} : { ExpressionAttributeValues: { ':expected': expectVersion } }),
      }),
    ),
  );
}

export async function hygieneRecord(ctx: StoreContext, clusterId: string): Promise<StoredHygiene | undefined> {
  const stored = await versionedText(ctx, hygieneRecordKey(clusterId));
  return stored && { record: hygieneRecordFromText(stored.text, stored.where), version: stored.version };
}

export async function saveHygieneRecord(ctx: StoreContext, clusterId: string, record: HygieneRecord, expectVersion: number): Promise<number> {
  const version = nextRecordVersion(expectVersion);
  if (!(await saveVersionedText(ctx, hygieneRecordKey(clusterId), 'hygiene-record', clusterId, hygieneRecordText(record), version, expectVersion)))
    throw new HygieneConflictError(clusterId, expectVersion);
  return version;
}

export async function maintenanceRecord(ctx: StoreContext, clusterId: string): Promise<StoredMaintenance | undefined> {
  const stored = await versionedText(ctx, maintenanceRecordKey(clusterId));
  return stored && { record: maintenanceRecordFromText(stored.text, stored.where), version: stored.version };
}

export async function saveMaintenanceRecord(ctx: StoreContext, clusterId: string, record: MaintenanceRecord, expectVersion: number): Promise<number> {
  const version = nextRecordVersion(expectVersion);
  if (!(await saveVersionedText(ctx, maintenanceRecordKey(clusterId), 'maintenance-record', clusterId, maintenanceRecordText(record), version, expectVersion)))
    throw new MaintenanceConflictError(clusterId, expectVersion);
  return version;
}
