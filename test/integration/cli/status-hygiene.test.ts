// `status` shows leader hygiene and maintenance through the real binary: a state file whose
// clusters have hygiene records (written by the real store, as the periodic check and move-leader
// write them) gets a line per cluster above the table, its last judgement and last move, and
// --json the same in fields; so does a cluster with a maintenance run in flight or ended; `status
// --table` reads the records of the table's registered clusters (dynalite).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putCluster } from '../../../functions/adapters/aws/dynamodb-directory.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { emptyHygieneRecord, type HygieneMoveRecord, type HygieneRecord } from '../../../functions/core/hygiene/hygiene-record.ts';
import type { HygieneRecords } from '../../../functions/ports/incident-store.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { jsonOf, runCli } from './support.ts';

const FROM = '8e9e05c52164694d';
const TO = '91bc3c398fb3c146';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-status-hygiene-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A record as a check leaves it after a move that ended `state`, judged `judgedAgoMs` ago. */
function recordOf(reason: string, judgedAgoMs: number, move?: Partial<HygieneMoveRecord>): HygieneRecord {
  const now = Date.now();
  const moves: HygieneMoveRecord[] = move
    ? [
        {
          moveId: 'hygiene-lab-1',
          at: now - 240_000,
          from: FROM,
          to: TO,
          term: 7,
          state: 'moved',
          endedAt: now - 180_000,
          newTerm: 8,
          tookMs: 180,
          message: 'Moved leadership.',
          ...move,
        },
      ]
    : [];
  return { ...emptyHygieneRecord(), moves, lastJudged: { at: now - judgedAgoMs, kind: 'hold', reason, message: `${reason} said` } };
}

async function seed(store: HygieneRecords, records: Record<string, HygieneRecord>): Promise<void> {
  for (const [clusterId, record] of Object.entries(records)) await store.saveHygieneRecord(clusterId, record, 0);
}

describe('status on a state file with hygiene records', () => {
  it('a line per cluster above the table, its cells aligned: the last judgement and the last move, how long ago', async () => {
    const state = path.join(dir, 'state.sqlite');
    const store = openSqliteStore({ path: state });
    try {
      await seed(store, { 'prod-eu-1': recordOf('HYGIENE_LEADER_HEALTHY', 40_000), lab: recordOf('HYGIENE_COOLDOWN', 12_000, {}) });
    } finally {
      await store.close();
    }

    const run = await runCli(['status', '--state', state]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(`^leader hygiene  lab {8}HYGIENE_COOLDOWN 1\\ds ago {8}last move ${FROM} → ${TO} moved 3m\\ds ago$`));
    expect(lines[1]).toMatch(/^leader hygiene {2}prod-eu-1 {2}HYGIENE_LEADER_HEALTHY [45]\ds ago$/);
    expect(lines[2]).toBe('no incidents');

    const json = jsonOf<{ incidents: unknown[]; hygiene: unknown[] }>(await runCli(['status', '--state', state, '--json']));
    expect(json.incidents).toEqual([]);
    expect(json.hygiene).toEqual([
      {
        clusterId: 'lab',
        lastJudged: { at: expect.any(String), kind: 'hold', reason: 'HYGIENE_COOLDOWN', message: 'HYGIENE_COOLDOWN said' },
        lastAlert: null,
        lastMove: {
          moveId: 'hygiene-lab-1',
          from: FROM,
          to: TO,
          state: 'moved',
          at: expect.any(String),
          endedAt: expect.any(String),
          message: 'Moved leadership.',
        },
      },
      { clusterId: 'prod-eu-1', lastJudged: expect.objectContaining({ reason: 'HYGIENE_LEADER_HEALTHY' }), lastAlert: null, lastMove: null },
    ]);
  });

  it('a line per cluster with a maintenance run: in flight (why, the steps done, the one running) or ended (how, why, when)', async () => {
    const state = path.join(dir, 'maintenance.sqlite');
    const store = openSqliteStore({ path: state });
    const now = Date.now();
    const step = (key: string, agoMs: number, outcome: 'done' | 'failed' = 'done') => ({ key, at: now - agoMs, tookMs: 900, outcome, message: `${key} said` });
    try {
      await store.saveMaintenanceRecord(
        'lab',
        {
          defragmentedAt: {},
          revisions: [],
          run: {
            runId: 'maintenance-lab-1',
            startedAt: now - 30_000,
            reason: 'MAINTENANCE_NOSPACE',
            askedBy: 'incident:i-1',
            done: [step(`defragment:${FROM}`, 20_000), step(`defragment:${TO}`, 10_000, 'failed')],
            claim: { key: `defragment:${TO}`, owner: 'maintenance:maintenance-lab-1:ab', until: now + 600_000 },
          },
        },
        0,
      );
      const lastRun = {
        runId: 'maintenance-prod-1',
        startedAt: now - 400_000,
        reason: 'MAINTENANCE_FRAGMENTED' as const,
        askedBy: 'maintenance-check',
        done: [step(`defragment:${FROM}`, 380_000)],
      };
      await store.saveMaintenanceRecord(
        'prod-eu-1',
        {
          defragmentedAt: {},
          revisions: [],
          lastRun: { ...lastRun, endedAt: now - 300_000, outcome: 'done', endReason: 'MAINTENANCE_NOT_NEEDED', message: 'nothing left' },
        },
        0,
      );
      await store.saveMaintenanceRecord('quiet', { defragmentedAt: {}, revisions: [{ at: now, revision: 9 }] }, 0);
    } finally {
      await store.close();
    }

    const run = await runCli(['status', '--state', state]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^maintenance  lab {8}running \\(MAINTENANCE_NOSPACE\\) since 3\\ds ago: 1 step done, 1 failed, defragment:${TO} now$`)),
      expect.stringMatching(/^maintenance {2}prod-eu-1 {2}last run done \(MAINTENANCE_NOT_NEEDED\) 5m\ds ago: 1 step done$/),
      'no incidents',
    ]);
    const json = jsonOf<{ maintenance: { clusterId: string; run: unknown; lastRun: unknown }[] }>(await runCli(['status', '--state', state, '--json']));
    expect(json.maintenance.map((m) => m.clusterId)).toEqual(['lab', 'prod-eu-1']);
    expect(json.maintenance[0]!.run).toMatchObject({ runId: 'maintenance-lab-1', reason: 'MAINTENANCE_NOSPACE', running: `defragment:${TO}` });
    expect(json.maintenance[1]).toMatchObject({
      run: null,
      lastRun: { outcome: 'done', reason: 'MAINTENANCE_NOT_NEEDED', steps: [expect.objectContaining({ key: `defragment:${FROM}` })] },
    });
  });

  it('says nothing of leader hygiene when no cluster has a record', async () => {
    const state = path.join(dir, 'empty.sqlite');
    await openSqliteStore({ path: state }).close();
    const run = await runCli(['status', '--state', state]);
    expect(run.stdout).toBe('no incidents\n');
    expect(jsonOf<Record<string, unknown>>(await runCli(['status', '--state', state, '--json']))).toEqual({ incidents: [] });
  });
});

describe('status --table with hygiene records (dynalite)', () => {
  let dynamo: Dynalite;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => dynamo?.close());

  it("shows the registered clusters' records; a record whose cluster is no longer registered is not read", async () => {
    const table = await dynamo.createTable();
    const env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    await putCluster(dynamo.client(), table, { clusterId: 'prod-eu-1', endpoints: ['https://10.0.0.1:2379'] });
    await putCluster(dynamo.client(), table, { clusterId: 'quiet', endpoints: ['https://10.0.1.1:2379'] });
    await seed(createDynamoIncidentStore({ client: dynamo.client(), tableName: table }), {
      'prod-eu-1': recordOf('HYGIENE_MOVE_PENDING', 5_000, { state: 'asked', at: Date.now() - 5_000, endedAt: undefined }),
      gone: recordOf('HYGIENE_LEADER_HEALTHY', 5_000),
    });

    const run = await runCli(['status', '--table', table, '--region', 'us-east-1'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^leader hygiene  prod-eu-1  HYGIENE_MOVE_PENDING \\ds ago  last move ${FROM} → ${TO} asked \\ds ago$`)),
      'no incidents',
    ]);
  });
});
