// `status` on a state file an earlier build wrote, whose journal lines are text, and on one this
// build wrote, whose lines carry fields: the real binary shows both timelines in the same words.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { jsonOf, runCli } from './support.ts';

const T0 = Date.parse('2025-06-01T12:00:00Z');
const ELECTED = { id: '91bc3c398fb3c146', name: 'etcd-2', term: 7, afterRemovalMs: 930 };

/** A state file holding one remediated incident, its journal written by `write`. */
async function stateFile(file: string, write: (incidentId: string) => Promise<void>): Promise<string> {
  const store = openSqliteStore({ path: file });
  try {
    const { incident } = await store.openOrJoin({
      clusterId: 'default',
      targetKey: 'memberName=etcd-1',
      target: { memberName: 'etcd-1' },
      reason: 'test',
      now: T0,
    });
    await write(incident.incidentId);
    await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: null, now: T0 + 5_000 });
    return incident.incidentId;
  } finally {
    await store.close();
  }
}

describe('status of an earlier build’s state file', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-status-earlier-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('shows its text lines as written, and a file of this build in the same words', async () => {
    const earlier = path.join(dir, 'earlier.sqlite');
    const earlierId = await stateFile(earlier, async (incidentId) => {
      const db = new DatabaseSync(earlier);
      try {
        const insert = db.prepare('INSERT INTO journal (incident_id, at, step, detail, is_step_marker) VALUES (?, ?, ?, ?, ?)');
        insert.run(incidentId, T0 + 1_000, 'move-leader:approve', JSON.stringify('TARGET_IS_FOLLOWER: etcd-1 is a follower.'), 0);
        insert.run(incidentId, T0 + 2_000, 'member-removed', JSON.stringify('removed through etcd-0 over direct http://127.0.0.1:4001'), 1);
        insert.run(incidentId, T0 + 3_000, 'leader-elected', JSON.stringify(JSON.stringify(ELECTED)), 1);
      } finally {
        db.close();
      }
    });
    const current = path.join(dir, 'current.sqlite');
    const currentId = await stateFile(current, async (incidentId) => {
      const store = openSqliteStore({ path: current });
      try {
        await store.appendJournal(incidentId, {
          at: T0 + 1_000,
          step: 'move-leader:approve',
          detail: { reason: 'TARGET_IS_FOLLOWER', message: 'etcd-1 is a follower.' },
        });
        await store.markStep(incidentId, {
          at: T0 + 2_000,
          step: 'member-removed',
          detail: { via: 'etcd-0 over direct http://127.0.0.1:4001', alreadyGone: false },
        });
        await store.markStep(incidentId, { at: T0 + 3_000, step: 'leader-elected', detail: ELECTED });
      } finally {
        await store.close();
      }
    });

    const shown = await Promise.all([runCli(['status', earlierId, '--state', earlier]), runCli(['status', currentId, '--state', current])]);
    for (const run of shown) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/move-leader:approve {2}TARGET_IS_FOLLOWER: etcd-1 is a follower\.\n/);
      expect(run.stdout).toMatch(/member-removed {7}removed through etcd-0 over direct http:\/\/127\.0\.0\.1:4001\n/);
      expect(run.stdout).toMatch(/leader-elected {7}etcd-2 \(91bc3c398fb3c146\) leads at term 7, 930 ms after the removal\n/);
    }
    const [earlierJson, currentJson] = await Promise.all([
      runCli(['status', earlierId, '--state', earlier, '--json']),
      runCli(['status', currentId, '--state', current, '--json']),
    ]);
    type Shown = { timeline: { at: string; step: string; detail: string }[] };
    expect(jsonOf<Shown>(earlierJson).timeline).toEqual(jsonOf<Shown>(currentJson).timeline);
    expect(jsonOf<Shown>(earlierJson).timeline.map((e) => e.step)).toEqual(['move-leader:approve', 'member-removed', 'leader-elected']);
  });
});
