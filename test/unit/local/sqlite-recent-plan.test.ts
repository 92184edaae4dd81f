// The recent incidents of a cluster are read through indexes: SQLite's plan for the query names
// an index for each half and scans no table, so a long history is never read row by row.
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { RECENT_INCIDENTS_SQL } from '../../../functions/adapters/local/sqlite-incidents.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { tempDir, type TempDir } from './helpers.ts';

let dir: TempDir;
afterEach(() => dir.remove());

describe('sqlite: recent incidents of a cluster', () => {
  it('are found through indexes, with no scan of the incidents table', async () => {
    dir = tempDir();
    const file = dir.file('state.sqlite');
    await openSqliteStore({ path: file }).close();
    const db = new DatabaseSync(file);
    try {
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${RECENT_INCIDENTS_SQL}`)
        .all({ clusterId: 'c1', since: 0, state: null })
        .map((row) => String(row.detail));
      const reads = plan.filter((step) => /\bincidents\b/.test(step));
      expect(reads).toHaveLength(2);
      for (const step of reads) expect(step).toMatch(/^SEARCH incidents USING INDEX /);
      expect(plan.join('\n')).toContain('incidents_by_cluster_changed');
    } finally {
      db.close();
    }
  });
});
