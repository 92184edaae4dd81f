import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { remediationHistoryFrom } from '../../../functions/core/remediation-history.ts';
import { targetKeyOf } from '../../../functions/core/target.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { migrations } from '../../../infra/local/sqlite-migrations.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../infra/local/sqlite-store.ts';
import { describeIncidentStoreContract, openFirstIncident } from '../../support/store-contract.ts';
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
        expect(raw.prepare('SELECT version FROM schema_migrations ORDER BY version').all().map((r) => r.version)).toEqual(
          migrations.map((_, i) => i + 1),
        );
        expect(raw.prepare('PRAGMA journal_mode').get()?.journal_mode).toBe('wal');
      } finally {
        raw.close();
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
