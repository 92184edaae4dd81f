import { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteIncidentStore } from '../../../infra/local/sqlite-store.ts';
import { tempDir, type TempDir } from './helpers.ts';

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

  it('20 concurrent calls for one target make exactly one incident; 19 join it', async () => {
    const s = store();
    const results = await Promise.all(Array.from({ length: 20 }, () => open(s)));
    expect(new Set(results.map((r) => r.incident.incidentId)).size).toBe(1);
    expect(results.filter((r) => !r.joined)).toHaveLength(1);
    expect(results.filter((r) => r.joined)).toHaveLength(19);
    expect(await s.listIncidents({ state: 'open' })).toHaveLength(1);
  });

  it('holds across two connections on the same file', async () => {
    const a = store();
    const b = store();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => open(i % 2 === 0 ? a : b)));
    expect(new Set(results.map((r) => r.incident.incidentId)).size).toBe(1);
    expect(results.filter((r) => !r.joined)).toHaveLength(1);
    expect(await b.listIncidents()).toHaveLength(1);
  });

  it('holds when threads with their own connections race at the same instant', async () => {
    const path = dir.file('store.db');
    await store().close(); // create the schema once, so the race is about incidents only
    const go = new Int32Array(new SharedArrayBuffer(4));
    const workers = Array.from(
      { length: 4 },
      () => new Worker(new URL('./open-or-join.worker.ts', import.meta.url), { workerData: { path, calls: 5, go } }),
    );
    const ready = workers.map((w) => new Promise<void>((resolve) => w.once('message', () => resolve())));
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
      await s.closeIncident(incident.incidentId, { outcome: 'remediated', result: {}, now: 2_000 });
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
    await s.closeIncident('inc-1', { outcome: 'remediated', result: null, now: 2 });
    const again = await s.openOrJoin(input);
    expect(again).toMatchObject({ joined: true, incident: { incidentId: 'inc-1', state: 'remediated' } });
    await expect(s.openOrJoin({ ...input, targetKey: 'memberName=etcd-9' })).rejects.toThrow(/belongs to c1\/memberName=etcd-0/);
  });
});
