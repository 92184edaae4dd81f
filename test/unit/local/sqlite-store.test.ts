import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { journalWords } from '../../../functions/core/journal-words.ts';
import { remediationHistoryFrom } from '../../../functions/core/remediation-history.ts';
import { targetKeyOf } from '../../../functions/core/target.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { migrations } from '../../../functions/adapters/local/sqlite-migrations.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { writtenByEarlierBuild } from '../../support/earlier-paths.ts';
import { describeIncidentStoreContract, openFirstIncident } from '../../support/store-contract.ts';
import { view as clusterView } from '../core/fixtures.ts';
import { tempDir, type TempDir } from './helpers.ts';

const HOUR = 3_600_000;

// Every store behaviour, as the DynamoDB store must show it too; "another handle" is a second connection on the file.
describeIncidentStoreContract('sqlite', async () => {
  const dir = tempDir();
  const path = dir.file('store.db');
  const store = openSqliteStore({ path });
  return {
    store,
    another: async () => openSqliteStore({ path }),
    close: async () => {
      await store.close();
      dir.remove();
    },
  };
});

describe('sqlite incident store: the file', () => {
  let dir: TempDir;
  let store: SqliteIncidentStore;
  let incident: Incident;

  beforeEach(async () => {
    dir = tempDir();
    store = openSqliteStore({ path: dir.file('store.db') });
    incident = await openFirstIncident(store);
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  describe('schema', () => {
    it('records its migrations and reopens an existing file without redoing them', async () => {
      await store.close();
      store = openSqliteStore({ path: dir.file('store.db') });
      expect(await store.getIncident(incident.incidentId)).toEqual(incident);
      const raw = new DatabaseSync(dir.file('store.db'), { readOnly: true });
      try {
        expect(
          raw
            .prepare('SELECT version FROM schema_migrations ORDER BY version')
            .all()
            .map((r) => r.version),
        ).toEqual(migrations.map((_, i) => i + 1));
        expect(raw.prepare('PRAGMA journal_mode').get()?.journal_mode).toBe('wal');
      } finally {
        raw.close();
      }
    });

    it('upgrades a file from before incidents could close, keeping every incident and its journal', async () => {
      const file = dir.file('old.db');
      const old = new DatabaseSync(file);
      old.exec('PRAGMA foreign_keys = ON');
      old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT');
      // Every migration before the one that let incidents close.
      migrations
        .slice(
          0,
          migrations.findIndex((sql) => sql.includes('CREATE TABLE incidents_next')),
        )
        .forEach((sql, i) => {
          old.exec(sql);
          old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(i + 1);
        });
      old.exec(
        `INSERT INTO incidents (incident_id, cluster_id, target_key, target, reason, state, opened_at, updated_at) VALUES ('old-1', 'c', 'memberName=a', '{"memberName":"a"}', 'r', 'open', 1, 1)`,
      );
      old.exec(`INSERT INTO journal (incident_id, at, step, detail) VALUES ('old-1', 1, 'opened', '"kept"')`);
      expect(() => old.exec(`UPDATE incidents SET state = 'closed'`)).toThrow(/CHECK constraint/);
      old.close();

      const upgraded = openSqliteStore({ path: file });
      try {
        expect((await upgraded.journal('old-1')).map(journalWords)).toContain('kept');
        expect((await upgraded.getIncident('old-1'))?.state).toBe('open');
      } finally {
        await upgraded.close();
      }
      const raw = new DatabaseSync(file);
      try {
        raw.exec('PRAGMA foreign_keys = ON');
        raw.exec(`UPDATE incidents SET state = 'closed'`);
        // The journal still belongs to its incident: the foreign key holds after the rebuild.
        expect(() => raw.exec(`INSERT INTO journal (incident_id, at, step) VALUES ('nobody', 1, 'x')`)).toThrow(/FOREIGN KEY/);
      } finally {
        raw.close();
      }
    });

    it('upgrades a file from before learner sightings were kept per cluster: its incidents stay, the record starts empty and is kept', async () => {
      const file = dir.file('before-sightings.db');
      const old = new DatabaseSync(file);
      old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT');
      migrations
        .slice(
          0,
          migrations.findIndex((sql) => sql.includes('CREATE TABLE learner_sightings')),
        )
        .forEach((sql, i) => {
          old.exec(sql);
          old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(i + 1);
        });
      old.exec(
        `INSERT INTO incidents (incident_id, cluster_id, target_key, target, reason, state, opened_at, updated_at) VALUES ('old-1', 'c', 'memberName=a', '{"memberName":"a"}', 'r', 'open', 1, 1)`,
      );
      old.close();
      const upgraded = openSqliteStore({ path: file });
      try {
        expect((await upgraded.getIncident('old-1'))?.state).toBe('open');
        expect(await upgraded.learnerSightings('c')).toEqual({});
        await upgraded.saveLearnerSightings('c', { abc: 7 });
      } finally {
        await upgraded.close();
      }
      const reopened = openSqliteStore({ path: file });
      try {
        expect(await reopened.learnerSightings('c')).toEqual({ abc: 7 });
      } finally {
        await reopened.close();
      }
    });

    it('refuses a file from a newer build', async () => {
      await store.close();
      const raw = new DatabaseSync(dir.file('store.db'));
      raw.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(migrations.length + 1);
      raw.close();
      expect(() => openSqliteStore({ path: dir.file('store.db') })).toThrow(
        `state file ${dir.file('store.db')}: was written by a newer etcd-remediator (schema ${migrations.length + 1}; this one knows up to ${migrations.length})`,
      );
      store = openSqliteStore({ path: ':memory:' });
    });
  });

  describe('views an earlier build wrote', () => {
    it('a view whose path is `exec` reads back as exec-relay', async () => {
      const today = clusterView(2_000, [
        { i: 0, paths: { direct: 'refused', 'port-forward': 'timeout', 'exec-relay': 'ok' } },
        { i: 1, leader: 0 },
        { i: 2, leader: 0 },
      ]);
      await store.updateIncident(incident.incidentId, { views: [today] }, { expectVersion: incident.version, now: 2_000 });
      await store.close();
      // The row as an earlier build left it: the same view, its relay path named `exec`.
      const raw = new DatabaseSync(dir.file('store.db'));
      try {
        raw.prepare('UPDATE incidents SET views = ? WHERE incident_id = ?').run(writtenByEarlierBuild([today]), incident.incidentId);
        expect(raw.prepare('SELECT views FROM incidents WHERE incident_id = ?').get(incident.incidentId)?.views).toContain('"path":"exec"');
      } finally {
        raw.close();
      }

      store = openSqliteStore({ path: dir.file('store.db') });
      expect((await store.getIncident(incident.incidentId))?.views).toEqual([today]);
      expect((await store.listIncidents({ clusterId: 'c1' })).map((i) => i.views)).toEqual([[today]]);
    });
  });
});

describe('store helpers', () => {
  it('boundary: exactly minHealthyPeriod still chains', () => {
    expect(remediationHistoryFrom([HOUR, 0], { minHealthyPeriodMs: HOUR, now: 2 * HOUR })).toEqual({
      lastRemediatedAt: HOUR,
      retryCount: 2,
    });
    expect(remediationHistoryFrom([0, HOUR + 1], { minHealthyPeriodMs: HOUR, now: HOUR + 2 }).retryCount).toBe(1);
  });

  it('targetKeyOf is canonical whatever the key order', () => {
    expect(targetKeyOf({ nodeName: 'n1', memberName: 'etcd-0' })).toBe('memberName=etcd-0,nodeName=n1');
    expect(targetKeyOf({ memberName: 'etcd-0', nodeName: 'n1' })).toBe(targetKeyOf({ nodeName: 'n1', memberName: 'etcd-0' }));
  });
});
