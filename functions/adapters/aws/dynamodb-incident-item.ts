// An incident as one item, and a patch as one conditional UpdateItem: the DynamoDB form of the
// sqlite store's `UPDATE incidents SET ... WHERE version = $expectVersion`.
import type { Decision } from '../../core/common/index.ts';
import { endsFrom } from '../../core/incident/index.ts';
import { type CarriedStreak, type ClusterView, keptViews } from '../../core/view/index.ts';
import type { InFlight, Incident, IncidentPatch, IncidentState, OutboxEntry } from '../../ports/incident-store.ts';
import { decodeJson, encodeJson, num, optJson, optStr, str, type Item } from './dynamodb-codec.ts';
import { byClusterSk, byStatePk, incidentIndexKeys, incidentKey } from './dynamodb-keys.ts';
import { table } from './dynamodb-table.ts';

/** What opening an incident needs to know; the open-pointer item carries the same. */
export interface NewIncident {
  incidentId: string;
  clusterId: string;
  targetKey: string;
  target: Record<string, string>;
  reason: string;
  openedAt: number;
}

/** What a new incident starts as; the journal's sequence lives on the item too. */
export function newIncidentItem(input: NewIncident): Item {
  return {
    ...incidentKey(input.incidentId),
    ...incidentIndexKeys({ ...input, state: 'open' }),
    type: 'incident',
    incidentId: input.incidentId,
    clusterId: input.clusterId,
    targetKey: input.targetKey,
    target: JSON.stringify(input.target),
    reason: input.reason,
    state: 'open',
    openedAt: input.openedAt,
    updatedAt: input.openedAt,
    attempt: 0,
    waits: 0,
    immediateReprobes: 0,
    views: '[]',
    outbox: '[]',
    stepsDone: '[]',
    version: 1,
    journalSeq: 0,
  };
}

export function toIncident(item: Item): Incident {
  const incident: Incident = {
    incidentId: str(item, 'incidentId'),
    clusterId: str(item, 'clusterId'),
    targetKey: str(item, 'targetKey'),
    target: decodeJson(item, 'target') as Record<string, string>,
    reason: str(item, 'reason'),
    state: str(item, 'state') as IncidentState,
    openedAt: num(item, 'openedAt'),
    updatedAt: num(item, 'updatedAt'),
    attempt: num(item, 'attempt'),
    waits: num(item, 'waits'),
    immediateReprobes: num(item, 'immediateReprobes'),
    views: decodeJson(item, 'views') as ClusterView[],
    outbox: decodeJson(item, 'outbox') as OutboxEntry[],
    stepsDone: decodeJson(item, 'stepsDone') as string[],
    version: num(item, 'version'),
  };
  const memberId = optStr(item, 'memberId');
  if (memberId !== undefined) incident.memberId = memberId;
  const memberName = optStr(item, 'memberName');
  if (memberName !== undefined) incident.memberName = memberName;
  const etcdClusterId = optStr(item, 'etcdClusterId');
  if (etcdClusterId !== undefined) incident.etcdClusterId = etcdClusterId;
  const lastDecision = optJson(item, 'lastDecision');
  if (lastDecision !== undefined) incident.lastDecision = lastDecision as Decision;
  const leaderUnreachable = optJson(item, 'leaderUnreachable');
  if (leaderUnreachable !== undefined) incident.leaderUnreachable = leaderUnreachable as CarriedStreak;
  const inFlight = optJson(item, 'inFlight');
  if (inFlight !== undefined) incident.inFlight = inFlight as InFlight;
  if (item.result !== undefined) incident.result = decodeJson(item, 'result');
  return incident;
}

export interface UpdateParts {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/** Collects SET and REMOVE clauses with placeholder names, so reserved words (state, result) are safe. */
class UpdateBuilder {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  readonly sets: string[] = [];
  readonly removes: string[] = [];

  name(attribute: string): string {
    const placeholder = `#${attribute}`;
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(key: string, value: unknown): string {
    const placeholder = `:${key}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  set(attribute: string, value: unknown): void {
    this.sets.push(`${this.name(attribute)} = ${this.value(attribute, value)}`);
  }

  remove(attribute: string): void {
    this.removes.push(this.name(attribute));
  }

  expression(): string {
    return [this.sets.length ? `SET ${this.sets.join(', ')}` : '', this.removes.length ? `REMOVE ${this.removes.join(', ')}` : ''].filter(Boolean).join(' ');
  }
}

/**
 * The patch's defined fields, updatedAt and version + 1, on condition that the item exists at
 * `expectVersion` (and, when the patch closes it, is still open). `expiresAt` is the TTL a close sets.
 */
export function patchUpdate(patch: IncidentPatch, options: { incidentId: string; expectVersion: number; now: number; expiresAt: number }): UpdateParts {
  const b = new UpdateBuilder();
  const numbers = ['attempt', 'waits', 'immediateReprobes'] as const;
  for (const field of numbers) if (patch[field] !== undefined) b.set(field, patch[field]);
  const strings = ['memberId', 'memberName', 'etcdClusterId'] as const;
  for (const field of strings) if (patch[field] !== undefined) b.set(field, patch[field]);
  if (patch.views !== undefined) b.set('views', encodeJson(keptViews(patch.views)));
  const json = ['lastDecision', 'result', 'outbox', 'stepsDone'] as const;
  for (const field of json) if (patch[field] !== undefined) b.set(field, encodeJson(patch[field]));
  // null clears: no streak, no step running.
  for (const field of ['leaderUnreachable', 'inFlight'] as const) {
    const value = patch[field];
    if (value === null) b.remove(field);
    else if (value !== undefined) b.set(field, encodeJson(value));
  }
  const conditions = [`attribute_exists(${table.partitionKey.name})`, `${b.name('version')} = ${b.value('expectVersion', options.expectVersion)}`];
  if (patch.state !== undefined) {
    closing(b, patch.state, options.expiresAt);
    // Open, or awaiting the replacement a completion says joined (core endsFrom).
    conditions.push(
      `${b.name('state')} IN (${endsFrom(patch.state)
        .map((s, i) => b.value(`from${i}`, s))
        .join(', ')})`,
    );
  }
  written(b, options.incidentId, options.now);
  b.sets.push(`${b.name('version')} = ${b.name('version')} + ${b.value('one', 1)}`);
  return {
    UpdateExpression: b.expression(),
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: b.names,
    ExpressionAttributeValues: b.values,
  };
}

/** closeIncident's write: outcome and result, on condition that it is open (and at `expectVersion`, if given). */
export function closeUpdate(input: {
  incidentId: string;
  outcome: IncidentState;
  result: unknown;
  now: number;
  expectVersion?: number;
  expiresAt: number;
}): UpdateParts {
  const b = new UpdateBuilder();
  closing(b, input.outcome, input.expiresAt);
  // As sqlite stores JSON null for an undefined result: nothing.
  if (input.result === undefined) b.remove('result');
  else b.set('result', encodeJson(input.result));
  written(b, input.incidentId, input.now);
  b.sets.push(`${b.name('version')} = ${b.name('version')} + ${b.value('one', 1)}`);
  const conditions = [`attribute_exists(${table.partitionKey.name})`, `${b.name('state')} = ${b.value('open', 'open')}`];
  if (input.expectVersion !== undefined) conditions.push(`${b.name('version')} = ${b.value('expectVersion', input.expectVersion)}`);
  return {
    UpdateExpression: b.expression(),
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: b.names,
    ExpressionAttributeValues: b.values,
  };
}

/** Every write moves the incident to the end of its cluster's index partition (byClusterSk). */
function written(b: UpdateBuilder, incidentId: string, now: number): void {
  b.set('updatedAt', now);
  b.set('gsi2sk', byClusterSk(now, incidentId));
}

/** A state change moves the incident to its state's index partition; a finished one expires. */
function closing(b: UpdateBuilder, state: IncidentState, expiresAt: number): void {
  b.set('state', state);
  b.set('gsi1pk', byStatePk(state));
  b.set(table.ttlAttribute, expiresAt);
}
