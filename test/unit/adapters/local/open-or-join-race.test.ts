// openOrJoin: one open incident per cluster and target, however many reports arrive at once.
//
// Only threads or processes can race here. node:sqlite is synchronous and openOrJoin reads and
// writes inside one synchronous transaction, so calls made from one thread run one after another
// whatever Promise.all suggests, even over two connections. The race below runs each caller in a
// worker thread of its own, with its own connection, released at the same instant; the one-thread
// tests only say what a second, later call does.
import { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteIncidentStore } from '../../../../functions/adapters/local/sqlite-store.ts';
import { tempDir, type TempDir } from '../../runtime/helpers.ts';

const target = { memberName: 'etcd-0' };
const open = (store: SqliteIncidentStore, extra: { clusterId?: string; targetKey?: string; now?: number } = {}) =>
  store.openOrJoin({
    clusterId: extra.clusterId ?? 'c1',
    targetKey: extra.targetKey ?? 'memberName=etcd-0',
    target,
    reason: 'member unhealthy',
    now: extra.now ?? 1_000,
  });

describe('openOrJoin under races', () => {
  let dir: TempDir;
  let stores: SqliteIncidentStore[];
  const store = (): SqliteIncidentStore => {
    const s = openSqliteStore({ path: dir.file('store.db') });
    stores.push(s);
    return s;
  };

  beforeEach(() => {
    dir = tempDir();
    stores = [];
  });
  afterEach(async () => {
    for (const s of stores) await s.close();
    dir.remove();
  });

  it('a later call for the same target, on this connection or another on the file, joins the open incident', async () => {
    const a = store();
    const b = store();
    const first = await open(a);
    const again = await open(a);
    const elsewhere = await open(b);
    expect(first.joined).toBe(false);
    expect([again, elsewhere].map((r) => [r.joined, r.incident.incidentId])).toEqual([
      [true, first.incident.incidentId],
      [true, first.incident.incidentId],
    ]);
    expect(await b.listIncidents({ state: 'open' })).toHaveLength(1);
  });

  it('20 calls from 4 threads, each with its own connection, released at once, make one incident; 19 join it', async () => {
    const path = dir.file('store.db');
    await store().close(); // create the schema once, so the race is about incidents only
    const go = new Int32Array(new SharedArrayBuffer(4));
    const workers = Array.from({ length: 4 }, () => new Worker(new URL('./open-or-join.worker.ts', import.meta.url), { workerData: { path, calls: 5, go } }));
    // A worker that fails before it is ready fails the test at once, not at its timeout.
    const ready = workers.map(
      (w) =>
        new Promise<void>((resolve, reject) => {
          w.once('message', () => resolve());
          w.once('error', reject);
        }),
    );
    const done = workers.map(
      (w) =>
        new Promise<{ incidentId: string; joined: boolean }[]>((resolve, reject) => {
          w.on('message', (m: { results?: { incidentId: string; joined: boolean }[] }) => {
            if (m.results) resolve(m.results);
          });
          w.once('error', reject);
        }),
    );
    await Promise.all(ready);
    Atomics.store(go, 0, 1);
    Atomics.notify(go, 0);
    const results = (await Promise.all(done)).flat();
    expect(results).toHaveLength(20);
    expect(new Set(results.map((r) => r.incidentId)).size).toBe(1);
    expect(results.filter((r) => !r.joined)).toHaveLength(1);
    expect(await store().listIncidents()).toHaveLength(1);
  });

  it('the database itself refuses a second open incident for the same target', async () => {
    const s = store();
    const { incident } = await open(s);
    const raw = new DatabaseSync(dir.file('store.db'));
    try {
      const insert = () =>
        raw
          .prepare(
            `INSERT INTO incidents (incident_id, cluster_id, target_key, target, reason, state, opened_at, updated_at)
             VALUES ('other', 'c1', 'memberName=etcd-0', '{}', 'bypass', 'open', 1, 1)`,
          )
          .run();
      expect(insert).toThrow(/UNIQUE constraint failed/);
      // Closed incidents do not count: once this one is closed, another may open.
      await s.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: {}, now: 2_000 });
      expect(insert().changes).toBe(1);
    } finally {
      raw.close();
    }
  });

  it('a different target, or a different cluster, opens its own incident', async () => {
    const s = store();
    const first = await open(s);
    const otherTarget = await open(s, { targetKey: 'memberName=etcd-1' });
    const otherCluster = await open(s, { clusterId: 'c2' });
    expect(otherTarget.joined).toBe(false);
    expect(otherCluster.joined).toBe(false);
    expect(new Set([first, otherTarget, otherCluster].map((r) => r.incident.incidentId)).size).toBe(3);
  });

  it('a closed incident lets a new one open for the same target', async () => {
    const s = store();
    const first = await open(s);
    const closed = await s.closeIncident(first.incident.incidentId, { outcome: 'blocked', result: { reason: 'NO_QUORUM' }, now: 2_000 });
    expect(closed.state).toBe('blocked');
    const second = await open(s, { now: 3_000 });
    expect(second.joined).toBe(false);
    expect(second.incident.incidentId).not.toBe(first.incident.incidentId);
    expect(second.incident.openedAt).toBe(3_000);
  });

  it('a caller-chosen id is idempotent even after the incident closed', async () => {
    const s = store();
    const input = { clusterId: 'c1', targetKey: 'memberName=etcd-0', target, reason: 'r', now: 1, incidentId: 'inc-1' };
    expect((await s.openOrJoin(input)).joined).toBe(false);
    await s.closeIncident('inc-1', { outcome: 'awaiting-replacement', result: null, now: 2 });
    const again = await s.openOrJoin(input);
    expect(again).toMatchObject({ joined: true, incident: { incidentId: 'inc-1', state: 'awaiting-replacement' } });
    await expect(s.openOrJoin({ ...input, targetKey: 'memberName=etcd-9' })).rejects.toThrow(/belongs to c1\/memberName=etcd-0/);
  });
});
