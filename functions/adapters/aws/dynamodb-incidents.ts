// Incidents on DynamoDB: read, list, update and close, each one conditional write where sqlite
// runs one conditional UPDATE. Closing also clears the target's open pointer and sets the TTL of
// the journal; both are housekeeping after the close, which a later call repeats if it was lost.
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { incidentStates } from '../../core/incident/index.ts';
import {
  IncidentNotFoundError,
  VersionConflictError,
  type CloseIncidentInput,
  type Incident,
  type IncidentFilter,
  type IncidentPatch,
} from '../../ports/incident-store.ts';
import type { Item } from './dynamodb-codec.ts';
import { batchGet, conditionally, expiresIn, isConditionFailed, queryAll, type StoreContext } from './dynamodb-context.ts';
import { closeUpdate, patchUpdate, toIncident, type UpdateParts } from './dynamodb-incident-item.ts';
import { byClusterPk, byClusterSk, byStatePk, incidentKey, openPointerKey, openPointerPk } from './dynamodb-keys.ts';
import { stampJournalTtl } from './dynamodb-journal.ts';

export async function getIncidentItem(ctx: StoreContext, incidentId: string): Promise<Item | undefined> {
  const { Item: item } = await ctx.doc.send(new GetCommand({ TableName: ctx.tableName, Key: incidentKey(incidentId), ConsistentRead: true }));
  return item;
}

export async function getIncident(ctx: StoreContext, incidentId: string): Promise<Incident | undefined> {
  const item = await getIncidentItem(ctx, incidentId);
  return item && toIncident(item);
}

export async function updateIncident(
  ctx: StoreContext,
  incidentId: string,
  patch: IncidentPatch,
  options: { expectVersion: number; now: number },
): Promise<Incident> {
  const parts = patchUpdate(patch, { ...options, incidentId, expiresAt: expiresIn(ctx, ctx.finishedTtlMs) });
  const updated = await conditionalUpdate(ctx, incidentId, parts);
  if (!updated) {
    const current = await getIncident(ctx, incidentId);
    if (!current) throw new IncidentNotFoundError(incidentId);
    // A version that moved on, or a close of a closed incident: closing is one way.
    throw new VersionConflictError(incidentId, options.expectVersion, current.version);
  }
  if (patch.state !== undefined) await finish(ctx, updated);
  return updated;
}

/** First close wins: a closed incident comes back unchanged. */
export async function closeIncident(ctx: StoreContext, incidentId: string, input: CloseIncidentInput): Promise<Incident> {
  const parts = closeUpdate({ ...input, incidentId, expiresAt: expiresIn(ctx, ctx.finishedTtlMs) });
  const closed = await conditionalUpdate(ctx, incidentId, parts);
  if (closed) {
    await finish(ctx, closed);
    return closed;
  }
  const current = await getIncident(ctx, incidentId);
  if (!current) throw new IncidentNotFoundError(incidentId);
  if (current.state === 'open') throw new VersionConflictError(incidentId, input.expectVersion ?? current.version, current.version);
  // Whoever closed it may have died before its housekeeping: doing it again is harmless.
  await finish(ctx, current);
  return current;
}

async function conditionalUpdate(ctx: StoreContext, incidentId: string, parts: UpdateParts): Promise<Incident | undefined> {
  try {
    const { Attributes: item } = await ctx.doc.send(
      new UpdateCommand({ TableName: ctx.tableName, Key: incidentKey(incidentId), ...parts, ReturnValues: 'ALL_NEW' }),
    );
    return toIncident(item!);
  } catch (error) {
    if (isConditionFailed(error)) return undefined;
    if (error instanceof Error && error.name === 'ValidationException' && /size/i.test(error.message)) {
      throw new Error(`incident ${incidentId}: the update would pass DynamoDB's 400 KB item limit, large fields compressed as they are (${error.message})`, {
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * After a close: the target's pointer goes (if it still names this incident), so the next report
 * opens anew, and the journal expires with the incident. Best effort: the close itself stands,
 * openOrJoin clears a pointer left to a closed incident, and every journal line has a TTL of its own.
 */
async function finish(ctx: StoreContext, incident: Incident): Promise<void> {
  await Promise.allSettled([clearPointer(ctx, incident.clusterId, incident.targetKey, incident.incidentId), stampJournalTtl(ctx, incident.incidentId)]);
}

export async function clearPointer(ctx: StoreContext, clusterId: string, targetKey: string, incidentId: string): Promise<void> {
  await conditionally(() =>
    ctx.doc.send(
      new DeleteCommand({
        TableName: ctx.tableName,
        Key: openPointerKey(clusterId, targetKey),
        ConditionExpression: 'incidentId = :id',
        ExpressionAttributeValues: { ':id': incidentId },
      }),
    ),
  );
}

/**
 * Oldest first. A cluster's open incidents come from its pointers, read strongly consistent (the
 * functions ask this on every step); other lists come from an index, with the open incidents in
 * them read again from the table, since an index lags its table by a moment.
 */
export async function listIncidents(ctx: StoreContext, filter: IncidentFilter = {}): Promise<Incident[]> {
  const { clusterId, state } = filter;
  // The recent ones are one key range of the cluster's partition (byClusterSk: ordered by last write).
  const since = 'openOrChangedSince' in filter ? filter.openOrChangedSince : undefined;
  let incidents: Incident[];
  if (clusterId !== undefined && state === 'open') {
    incidents = await openOf(ctx, clusterId);
  } else {
    const indexed =
      clusterId !== undefined
        ? await queryIndex(
            ctx,
            'byCluster',
            { attribute: 'gsi2pk', value: byClusterPk(clusterId) },
            since === undefined ? undefined : { attribute: 'gsi2sk', from: byClusterSk(since, '') },
          )
        : (await Promise.all((state ? [state] : incidentStates).map((s) => queryIndex(ctx, 'byState', { attribute: 'gsi1pk', value: byStatePk(s) })))).flat();
    incidents = await freshen(ctx, indexed.map(toIncident), clusterId);
  }
  return incidents
    .filter((i) => (state === undefined || i.state === state) && (clusterId === undefined || i.clusterId === clusterId))
    .filter((i) => since === undefined || i.state === 'open' || i.updatedAt >= since)
    .sort((a, b) => a.openedAt - b.openedAt || (a.incidentId < b.incidentId ? -1 : a.incidentId > b.incidentId ? 1 : 0));
}

const queryIndex = (
  ctx: StoreContext,
  indexName: string,
  partition: { attribute: string; value: string },
  range?: { attribute: string; from: string },
): Promise<Item[]> =>
  queryAll(ctx, {
    IndexName: indexName,
    KeyConditionExpression: range ? '#pk = :pk AND #sk >= :from' : '#pk = :pk',
    ExpressionAttributeNames: { '#pk': partition.attribute, ...(range ? { '#sk': range.attribute } : {}) },
    ExpressionAttributeValues: { ':pk': partition.value, ...(range ? { ':from': range.from } : {}) },
  });

/** The incidents a cluster's open pointers name, as the table holds them now. */
async function openOf(ctx: StoreContext, clusterId: string): Promise<Incident[]> {
  const pointers = await queryAll(ctx, {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': openPointerPk(clusterId) },
    ConsistentRead: true,
  });
  const ids = pointers.map((p) => p.incidentId).filter((id): id is string => typeof id === 'string');
  return (await batchGet(ctx, ids.map(incidentKey))).map(toIncident);
}

/** Re-reads what may have moved since the index saw it (the open ones), and adds what it may not have seen yet. */
async function freshen(ctx: StoreContext, indexed: Incident[], clusterId: string | undefined): Promise<Incident[]> {
  const byId = new Map(indexed.map((i) => [i.incidentId, i]));
  const stale = indexed.filter((i) => i.state === 'open').map((i) => i.incidentId);
  const reread = await batchGet(ctx, stale.map(incidentKey));
  for (const item of reread) byId.set(String(item.incidentId), toIncident(item));
  if (clusterId !== undefined) for (const incident of await openOf(ctx, clusterId)) byId.set(incident.incidentId, incident);
  return [...byId.values()];
}
