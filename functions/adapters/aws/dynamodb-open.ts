// openOrJoin on DynamoDB: one open incident per (cluster, target) without a transaction. The
// claim is a pointer item keyed by cluster and target, created only if absent; it carries
// everything the incident is opened from, so whoever finds a pointer without its incident (its
// creator died between the two writes, or is still between them) creates that same incident,
// with a put conditional on absence, and exactly one of them writes it. Closing deletes the
// pointer; a pointer left to a closed incident is deleted by the next caller that meets it.
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Incident, OpenIncidentInput } from '../../ports/incident-store.ts';
import { decodeJson, num, str, type Item } from './dynamodb-codec.ts';
import { conditionally, isConditionFailed, type StoreContext } from './dynamodb-context.ts';
import { clearPointer, getIncident } from './dynamodb-incidents.ts';
import { newIncidentItem, toIncident, type NewIncident } from './dynamodb-incident-item.ts';
import { openPointerKey } from './dynamodb-keys.ts';
import { table } from './dynamodb-table.ts';

/** Each round either settles or saw another caller change the pointer; this many is a fault, not a race. */
const MAX_ROUNDS = 20;

interface Pointer extends NewIncident {
  /** Store clock when written: a pointer older than the retention names an incident its TTL removed. */
  createdAt: number;
}

export async function openOrJoin(ctx: StoreContext, input: OpenIncidentInput): Promise<{ incident: Incident; joined: boolean }> {
  if (input.incidentId !== undefined) {
    const same = await getIncident(ctx, input.incidentId);
    if (same) return { incident: belongsTo(same, input), joined: true };
  }
  const key = openPointerKey(input.clusterId, input.targetKey);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: key, ConsistentRead: true }));
    if (!found.Item) {
      const pointer: Pointer = {
        incidentId: input.incidentId ?? randomUUID(),
        clusterId: input.clusterId,
        targetKey: input.targetKey,
        target: input.target,
        reason: input.reason,
        openedAt: input.now,
        createdAt: ctx.clock(),
      };
      const claimed = await conditionally(() =>
        ctx.doc.send(
          new PutCommand({ TableName: ctx.tableName, Item: pointerItem(pointer), ConditionExpression: `attribute_not_exists(${table.partitionKey.name})` }),
        ),
      );
      if (!claimed) continue;
      const incident = await materialize(ctx, pointer);
      if (matches(incident, input)) return { incident, joined: false };
      await misplaced(ctx, incident, input);
      continue;
    }
    const pointer = toPointer(found.Item);
    const incident = (await getIncident(ctx, pointer.incidentId)) ?? (young(ctx, pointer) ? await materialize(ctx, pointer) : undefined);
    if (incident && !matches(incident, input)) {
      await misplaced(ctx, incident, input);
      continue;
    }
    if (incident?.state === 'open') return { incident, joined: true };
    // Its incident closed (or expired): the pointer is stale. Deleted only if it still names that incident.
    await clearPointer(ctx, input.clusterId, input.targetKey, pointer.incidentId);
  }
  throw new Error(`openOrJoin ${input.clusterId}/${input.targetKey}: the open pointer kept changing for ${MAX_ROUNDS} rounds`);
}

/** Writes the pointer's incident unless someone already did; either way, returns it as stored. */
async function materialize(ctx: StoreContext, pointer: Pointer): Promise<Incident> {
  const item = newIncidentItem(pointer);
  try {
    await ctx.doc.send(new PutCommand({ TableName: ctx.tableName, Item: item, ConditionExpression: `attribute_not_exists(${table.partitionKey.name})` }));
    return toIncident(item);
  } catch (error) {
    if (!isConditionFailed(error)) throw error;
  }
  const stored = await getIncident(ctx, pointer.incidentId);
  if (!stored) throw new Error(`incident ${pointer.incidentId}: neither written nor found`);
  return stored;
}

const matches = (incident: Incident, input: OpenIncidentInput): boolean => incident.clusterId === input.clusterId && incident.targetKey === input.targetKey;

/**
 * Two opens raced with one caller-chosen id for two targets, and the id went to the other target:
 * our pointer must not stay behind. The caller that chose the id hears whose incident it is; any
 * other caller simply tries again.
 */
async function misplaced(ctx: StoreContext, incident: Incident, input: OpenIncidentInput): Promise<void> {
  await clearPointer(ctx, input.clusterId, input.targetKey, incident.incidentId);
  if (input.incidentId === incident.incidentId) belongsTo(incident, input);
}

function belongsTo(incident: Incident, input: OpenIncidentInput): Incident {
  if (!matches(incident, input)) throw new Error(`incident ${incident.incidentId} belongs to ${incident.clusterId}/${incident.targetKey}`);
  return incident;
}

/** A pointer whose incident is missing is mid-creation while young, and names an expired incident once old. */
const young = (ctx: StoreContext, pointer: Pointer): boolean => ctx.clock() - pointer.createdAt < ctx.finishedTtlMs;

const pointerItem = (pointer: Pointer): Item => ({
  ...openPointerKey(pointer.clusterId, pointer.targetKey),
  type: 'open-pointer',
  ...pointer,
  target: JSON.stringify(pointer.target),
});

const toPointer = (item: Item): Pointer => ({
  incidentId: str(item, 'incidentId'),
  clusterId: str(item, 'clusterId'),
  targetKey: str(item, 'targetKey'),
  target: decodeJson(item, 'target') as Record<string, string>,
  reason: str(item, 'reason'),
  openedAt: num(item, 'openedAt'),
  createdAt: num(item, 'createdAt'),
});
