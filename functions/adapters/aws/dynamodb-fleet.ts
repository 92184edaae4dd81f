// The fleet's records on DynamoDB (keys in dynamodb-keys.ts): pauses, each cluster's newest
// incident opening, and the removal slots. A slot is one item taken by a conditional write (free,
// its lease ended, or already ours), so racing containers never hold more than the cap.
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { FleetMark, FleetPauses } from '../../core/fleet/index.ts';
import type { ClusterOpened, RemovalSlot, SlotRequest, SlotTaken } from '../../ports/fleet.ts';
import { num, str, type Item } from './dynamodb-codec.ts';
import { conditionally, expiresIn, queryAll, type StoreContext } from './dynamodb-context.ts';
import {
  FLEET_CLUSTERS_PK,
  FLEET_OPENINGS_PK,
  FLEET_PAUSES_PK,
  FLEET_SLOTS_PK,
  fleetOpeningKey,
  fleetPauseKey,
  removalSlotKey,
  stormEndedKey,
} from './dynamodb-keys.ts';
import { table } from './dynamodb-table.ts';

const DAY_MS = 86_400_000;
const markOf = (item: Item): FleetMark => ({ by: str(item, 'by'), at: num(item, 'at'), why: str(item, 'why') });

export async function fleetPauses(ctx: StoreContext): Promise<FleetPauses> {
  const items = await queryAll(ctx, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': FLEET_PAUSES_PK }, ConsistentRead: true });
  const pauses: FleetPauses = {};
  const clusters: Record<string, FleetMark> = {};
  for (const item of items) {
    const sk = str(item, table.sortKey.name);
    if (sk === 'fleet') pauses.fleet = markOf(item);
    else if (sk === stormEndedKey.sk) pauses.stormEnded = markOf(item);
    else if (sk.startsWith('cluster#')) clusters[str(item, 'clusterId')] = markOf(item);
  }
  if (Object.keys(clusters).length > 0) pauses.clusters = clusters;
  return pauses;
}

export async function setPause(ctx: StoreContext, clusterId: string | undefined, mark: FleetMark | null): Promise<boolean> {
  const key = fleetPauseKey(clusterId);
  if (mark === null) {
    return conditionally(() =>
      ctx.doc.send(new DeleteCommand({ TableName: ctx.tableName, Key: key, ConditionExpression: `attribute_exists(${table.partitionKey.name})` })),
    );
  }
  await ctx.doc.send(
    new PutCommand({ TableName: ctx.tableName, Item: { ...key, type: 'fleet-pause', ...(clusterId === undefined ? {} : { clusterId }), ...mark } }),
  );
  return true;
}

export async function endStorm(ctx: StoreContext, mark: FleetMark): Promise<void> {
  await ctx.doc.send(new PutCommand({ TableName: ctx.tableName, Item: { ...stormEndedKey, type: 'storm-ended', ...mark } }));
}

/** Only a newer opening replaces the one kept: a repeat, or a late one, changes nothing. */
export async function noteOpened(ctx: StoreContext, clusterId: string, openedAt: number): Promise<void> {
  await conditionally(() =>
    ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: fleetOpeningKey(clusterId),
        UpdateExpression: 'SET #type = :type, clusterId = :clusterId, openedAt = :openedAt',
        ConditionExpression: 'attribute_not_exists(openedAt) OR openedAt < :openedAt',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':type': 'fleet-opening', ':clusterId': clusterId, ':openedAt': openedAt },
      }),
    ),
  );
}

/** One partition, one item a cluster: 500 clusters are one or two pages. */
export async function openedSince(ctx: StoreContext, since: number): Promise<ClusterOpened[]> {
  const items = await queryAll(ctx, {
    KeyConditionExpression: 'pk = :pk',
    FilterExpression: 'openedAt > :since',
    ExpressionAttributeValues: { ':pk': FLEET_OPENINGS_PK, ':since': since },
    ConsistentRead: true,
  });
  return items.map((item) => ({ clusterId: str(item, 'clusterId'), openedAt: num(item, 'openedAt') })).sort((a, b) => b.openedAt - a.openedAt);
}

const slotOf = (item: Item): RemovalSlot => ({
  slot: num(item, 'slot'),
  owner: str(item, 'owner'),
  clusterId: str(item, 'clusterId'),
  until: num(item, 'until'),
});

async function allSlots(ctx: StoreContext): Promise<RemovalSlot[]> {
  const items = await queryAll(ctx, { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': FLEET_SLOTS_PK }, ConsistentRead: true });
  return items.map(slotOf).sort((a, b) => a.slot - b.slot);
}

/** Our own slot is renewed; else each slot not held is tried in turn, each put conditional on it being free, expired or ours. */
export async function takeRemovalSlot(ctx: StoreContext, request: SlotRequest): Promise<SlotTaken> {
  const { owner, clusterId, max, leaseMs, now } = request;
  if (!(leaseMs > 0) || !(max > 0)) throw new RangeError(`a slot needs a positive lease and cap, got ${leaseMs} ms and ${max}`);
  const slots = (await allSlots(ctx)).filter((s) => s.slot < max);
  const own = slots.find((s) => s.owner === owner);
  const held = new Set(slots.filter((s) => s.until > now).map((s) => s.slot));
  const tries = own ? [own.slot] : Array.from({ length: max }, (_, i) => i).filter((i) => !held.has(i));
  for (const slot of tries) {
    const took = await conditionally(() =>
      ctx.doc.send(
        new PutCommand({
          TableName: ctx.tableName,
          // The TTL only tidies a slot nobody released; the lease is `until`, in the caller's time.
          Item: {
            ...removalSlotKey(slot),
            type: 'removal-slot',
            slot,
            owner,
            clusterId,
            until: now + leaseMs,
            [table.ttlAttribute]: expiresIn(ctx, leaseMs + DAY_MS),
          },
          ConditionExpression: `attribute_not_exists(${table.partitionKey.name}) OR #owner = :owner OR #until <= :now`,
          ExpressionAttributeNames: { '#owner': 'owner', '#until': 'until' },
          ExpressionAttributeValues: { ':owner': owner, ':now': now },
        }),
      ),
    );
    if (took) return { taken: true, slot };
  }
  return { taken: false, holders: (await allSlots(ctx)).filter((s) => s.slot < max && s.until > now) };
}

export async function releaseRemovalSlot(ctx: StoreContext, owner: string): Promise<boolean> {
  let released = false;
  for (const slot of (await allSlots(ctx)).filter((s) => s.owner === owner)) {
    const deleted = await conditionally(() =>
      ctx.doc.send(
        new DeleteCommand({
          TableName: ctx.tableName,
          Key: removalSlotKey(slot.slot),
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':owner': owner },
        }),
      ),
    );
    released ||= deleted;
  }
  return released;
}

export async function removalSlots(ctx: StoreContext, now: number): Promise<RemovalSlot[]> {
  return (await allSlots(ctx)).filter((s) => s.until > now);
}

/**
 * The registered clusters' ids: on a deployed table the directory is the fleet's roster, written by
 * `register`, so a remediator's own list adds nothing here.
 */
export async function registeredClusterIds(ctx: Pick<StoreContext, 'doc' | 'tableName'>): Promise<string[]> {
  const items = await queryAll(ctx, {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': FLEET_CLUSTERS_PK },
    ProjectionExpression: 'sk',
  });
  return items.map((item) => String(item.sk));
}
