import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { remediationHistoryFrom } from '../../../../functions/core/removal/remediation-history.ts';
import { targetKeyOf } from '../../../../functions/core/view/target.ts';
import type { Incident } from '../../../../functions/ports/incident-store.ts';
import { BASE_VERSION, migrations, SCHEMA_VERSION } from '../../../../functions/adapters/local/sqlite-migrations.ts';
import { StateFileError } from '../../../../functions/adapters/local/state-file.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../../functions/adapters/local/sqlite-store.ts';
import { describeIncidentStoreContract, openFirstIncident } from '../../../support/store-contract.ts';
import { tempDir, type TempDir } from '../../runtime/helpers.ts';

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
    /** The schema versions a file records, oldest first. */
    const versionsIn = (file: string): number[] => {
      const raw = new DatabaseSync(file, { readOnly: true });
      try {
        return raw
          .prepare('SELECT version FROM schema_migrations ORDER BY version')
          .all()
          .map((r) => Number(r.version));
      } finally {
        raw.close();
      }
    };

    it('creates a new file at the base schema, migrates it, and reopens it without redoing either', async () => {
      await store.close();
      store = openSqliteStore({ path: dir.file('store.db') });
      expect(await store.getIncident(incident.incidentId)).toEqual(incident);
      expect(versionsIn(dir.file('store.db'))).toEqual([BASE_VERSION, ...migrations.map((_, i) => BASE_VERSION + 1 + i)]);
      expect(SCHEMA_VERSION).toBe(BASE_VERSION + migrations.length);
      const raw = new DatabaseSync(dir.file('store.db'), { readOnly: true });
      try {
        expect(raw.prepare('PRAGMA journal_mode').get()?.journal_mode).toBe('wal');
      } finally {
        raw.close();
      }
    });

    it('refuses a file from a newer build', async () => {
      await store.close();
      const raw = new DatabaseSync(dir.file('store.db'));
      raw.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(SCHEMA_VERSION + 1);
      raw.close();
      expect(() => openSqliteStore({ path: dir.file('store.db') })).toThrow(
        `state file ${dir.file('store.db')}: was written by a newer etcd-remediator (schema ${SCHEMA_VERSION + 1}; this one knows up to ${SCHEMA_VERSION})`,
      );
      store = openSqliteStore({ path: ':memory:' });
    });

    // Builds before the base numbered their schema 1 to BASE_VERSION - 1; each is refused, as
    // written and read only, and the file is left as it was.
    it.each([1, 8, BASE_VERSION - 1])('refuses a file of an earlier build at schema %i, saying what to do, and changes nothing in it', async (version) => {
      await store.close();
      const file = dir.file(`earlier-${version}.db`);
      const raw = new DatabaseSync(file);
      raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT');
      for (let v = 1; v <= version; v++) raw.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(v);
      raw.close();
      const said = `state file ${file}: was written by an earlier build of etcd-remediator (schema ${version}); finish or close its incidents with that build, or start from a new state file`;
      expect(() => openSqliteStore({ path: file })).toThrow(new StateFileError(file, said));
      expect(() => openSqliteStore({ path: file, readOnly: true })).toThrow(new StateFileError(file, said));
      expect(versionsIn(file)).toEqual(Array.from({ length: version }, (_, i) => i + 1));
      const tables = new DatabaseSync(file, { readOnly: true });
      try {
        expect(
          tables
            .prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`)
            .all()
            .map((r) => r.name),
        ).toEqual(['schema_migrations']);
      } finally {
        tables.close();
      }
      store = openSqliteStore({ path: ':memory:' });
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
