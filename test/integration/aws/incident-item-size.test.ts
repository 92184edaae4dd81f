// An incident at its largest, written as each store writes it: every field the incident keeps at
// the most the limits allow at once (more than any one moment holds), through the DynamoDB store
// on dynalite and the SQLite store. Its size is the bound the README gives, and it stays under
// DynamoDB's 400 KB item limit with the same room on both stores.
import { GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DatabaseSync } from 'node:sqlite';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent } from '../../../events/catalogue.ts';
import { incidentKey } from '../../../functions/adapters/aws/dynamodb-keys.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import type { Decision } from '../../../functions/core/common/decision.ts';
import { journalSteps, membersSeen } from '../../../functions/core/incident/journal.ts';
import { targetKeyOf } from '../../../functions/core/view/target.ts';
import {
  boundedEvidence,
  boundedTimeline,
  MAX_EVIDENCE_BYTES,
  MAX_MESSAGE_CHARS,
  MAX_TIMELINE_DETAIL_BYTES,
  MAX_TIMELINE_ENTRIES,
} from '../../../functions/core/common/said-limits.ts';
import { keptViews, MAX_HISTORY_BYTES, MAX_INCIDENT_VIEWS, viewBytes } from '../../../functions/core/view/view-history.ts';
import { clipText, VIEW_LIMITS } from '../../../functions/core/common/view-limits.ts';
import type { IncidentPatch, IncidentStore } from '../../../functions/ports/incident-store.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { testIncidentId } from '../../support/incident-ids.ts';
import { overlong, worstView } from '../../support/worst-case-view.ts';
import { tempDir } from '../../unit/runtime/helpers.ts';

/** DynamoDB's item limit: "400 KB", attribute names and values together. */
const DYNAMODB_ITEM_BYTES = 400 * 1024;
/** What the table in the README says an incident item grows to, at most. */
const ITEM_BOUND_BYTES = 360 * 1024;

/** A control character: one UTF-16 unit that JSON writes as six bytes. */
const dearest = (units: number): string => '\u0001'.repeat(units);
const at = new Date('2026-01-01T00:00:00.000Z').toISOString();

/** The selector (a report gives one) and reason at the schema's longest, in their dearest characters. */
const target = { machineName: dearest(253) };
const reason = dearest(1_000);
/** Every incident id is a UUID: 36 characters, whatever the incident. */
const incidentId = testIncidentId(1);
const clusterId = 'c'.repeat(253);

/** Evidence filling MAX_EVIDENCE_BYTES, as a step's commit leaves it. */
function fullEvidence(): Record<string, unknown> {
  const names = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, dearest(40)]));
  const evidence = boundedEvidence({ names, note: 'x'.repeat(MAX_EVIDENCE_BYTES) });
  expect(Buffer.byteLength(JSON.stringify(evidence))).toBeGreaterThan(MAX_EVIDENCE_BYTES * 0.9);
  return evidence;
}

/**
 * Every field at once at its largest: more than any one step leaves, so it bounds them all. The
 * views kept are two of the largest; views a little smaller could fill MAX_HISTORY_BYTES, which
 * `withFullHistory` adds.
 */
function largestPatch(): IncidentPatch {
  const views = Array.from({ length: MAX_INCIDENT_VIEWS }, (_, i) => worstView(VIEW_LIMITS.members, i));
  const decision: Decision = { kind: 'block', reason: 'QUORUM_AT_RISK', message: dearest(MAX_MESSAGE_CHARS), evidence: fullEvidence() };
  const timeline = boundedTimeline(
    Array.from({ length: 3 * MAX_TIMELINE_ENTRIES }, (_, i) => ({
      at,
      step: `s${i}`.padEnd(64, 's'),
      detail: overlong(`line ${i}`, MAX_TIMELINE_DETAIL_BYTES),
    })),
  );
  const newest = views.at(-1)!;
  const probed = makeEvent('MembersProbed', {
    incidentId,
    clusterId,
    attempt: 59,
    at,
    target: { ...target, memberId: 'f000000000000001', name: clipText(dearest(300), 253) },
    view: newest,
  });
  return {
    attempt: 59,
    waits: 1_000,
    memberId: 'f000000000000001',
    memberName: clipText(dearest(300), 253),
    etcdClusterId: 'f000000000000007',
    views,
    lastDecision: decision,
    result: { ...decision, timeline },
    leaderUnreachable: { since: Date.parse(at), term: Number.MAX_SAFE_INTEGER },
    outbox: [
      {
        kind: 'journal',
        entry: {
          at: Date.parse(at),
          step: journalSteps.probed,
          detail: {
            answered: 0,
            members: VIEW_LIMITS.members,
            leader: 'agreed',
            leaderName: clipText(dearest(300), 253),
            listFailures: [],
            seen: membersSeen(newest),
          },
        },
      },
      { kind: 'publish', event: probed },
    ],
    stepsDone: ['probe-members@59', 'move-leader@59', 'schedule-retry@59', 'remediate@59'],
    inFlight: { key: 'remediate@59', holder: 'r'.repeat(64), until: Date.parse(at) },
  };
}

/**
 * An item's size as DynamoDB counts it: each attribute's name and value, in UTF-8 and raw bytes.
 * `unzipped` counts a gzipped field at its JSON's size: the bound holds even when nothing compresses.
 */
function dynamoItemBytes(item: Record<string, AttributeValue>, unzipped = false): number {
  const valueBytes = (value: AttributeValue): number => {
    if (value.S !== undefined) return Buffer.byteLength(value.S);
    if (value.B !== undefined) return unzipped ? gunzipSync(value.B).length : value.B.length;
    if (value.N !== undefined) return 21;
    if (value.M !== undefined) return 3 + dynamoItemBytes(value.M, unzipped);
    if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + valueBytes(v), 0);
    return 1;
  };
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

/** `size`, had the views kept filled MAX_HISTORY_BYTES to the byte. */
const withFullHistory = (size: number): number => size - keptViews(largestPatch().views!).reduce((sum, v) => sum + viewBytes(v), 0) + MAX_HISTORY_BYTES;

async function writeLargest(store: IncidentStore): Promise<void> {
  const { incident } = await store.openOrJoin({ clusterId, targetKey: targetKeyOf(target), target, reason, now: Date.parse(at), incidentId });
  await store.updateIncident(incident.incidentId, largestPatch(), { expectVersion: incident.version, now: Date.parse(at) });
}

let dynamo: Dynalite;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo.close();
});

describe('an incident item at its largest', () => {
  it('keeps the views that fit, and nothing grows past the limits: the history holds two of the largest views', () => {
    const views = largestPatch().views!;
    expect(keptViews(views).length).toBeGreaterThanOrEqual(2);
  });

  it(`DynamoDB: under ${ITEM_BOUND_BYTES / 1024} KiB as DynamoDB counts it, even were nothing to compress and the history full: under its 400 KB limit`, async () => {
    const tableName = await dynamo.createTable();
    const client = dynamo.client();
    const store = createDynamoIncidentStore({ client, tableName });
    await writeLargest(store);
    const { Item } = await client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: incidentKey(incidentId).pk }, sk: { S: incidentKey(incidentId).sk } } }),
    );
    const [stored, uncompressed] = [dynamoItemBytes(Item!), dynamoItemBytes(Item!, true)];
    if (process.env.SHOW_SIZES)
      console.log('dynamodb item bytes', stored, 'as if nothing compressed', uncompressed, 'with a full history', withFullHistory(uncompressed));
    expect(stored).toBeLessThanOrEqual(uncompressed);
    expect(withFullHistory(uncompressed)).toBeLessThan(ITEM_BOUND_BYTES);
    expect(ITEM_BOUND_BYTES).toBeLessThan(DYNAMODB_ITEM_BYTES);
    // Read back exactly as written (the large fields went gzipped).
    expect((await store.getIncident(incidentId))?.views).toEqual(keptViews(largestPatch().views!));
  });

  it(`SQLite: the row's text under the same ${ITEM_BOUND_BYTES / 1024} KiB, the history full`, async () => {
    const dir = tempDir();
    const path = dir.file('state.sqlite');
    const store = openSqliteStore({ path });
    try {
      await writeLargest(store);
      const db = new DatabaseSync(path, { readOnly: true });
      const row = db.prepare('SELECT * FROM incidents WHERE incident_id = ?').get(incidentId) as Record<string, unknown>;
      db.close();
      const size = Object.values(row).reduce<number>((sum, v) => sum + (typeof v === 'string' ? Buffer.byteLength(v) : 8), 0);
      if (process.env.SHOW_SIZES) console.log('sqlite row bytes', size, 'with a full history', withFullHistory(size));
      expect(withFullHistory(size)).toBeLessThan(ITEM_BOUND_BYTES);
      expect((await store.getIncident(incidentId))?.views).toEqual(keptViews(largestPatch().views!));
    } finally {
      await store.close();
      dir.remove();
    }
  });
});
