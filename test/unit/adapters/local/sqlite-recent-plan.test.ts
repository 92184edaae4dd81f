// The incidents a step reads are read through indexes: SQLite's plan for each query names an
// index and scans no table, so a long history is never read row by row.
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { listIncidentsQuery, RECENT_INCIDENTS_SQL } from '../../../../functions/adapters/local/sqlite-incidents.ts';
import { openSqliteStore } from '../../../../functions/adapters/local/sqlite-store.ts';
import { tempDir, type TempDir } from '../../runtime/helpers.ts';

let dir: TempDir;
afterEach(() => dir.remove());

/** SQLite's plan for `sql`, one line a step, on a state file of today's schema. */
async function planOf(sql: string, params: Record<string, string | number | null>): Promise<string[]> {
  dir = tempDir();
  const file = dir.file('state.sqlite');
  await openSqliteStore({ path: file }).close();
  const db = new DatabaseSync(file);
  try {
    return db
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .all(params)
      .map((row) => String(row.detail));
  } finally {
    db.close();
  }
}

describe('sqlite: recent incidents of a cluster', () => {
  it('the recent ones of a cluster: two index ranges, with no scan of the incidents table', async () => {
    const plan = await planOf(RECENT_INCIDENTS_SQL, { clusterId: 'c1', since: 0, state: null });
    const reads = plan.filter((step) => /\bincidents\b/.test(step));
    expect(reads).toHaveLength(2);
    for (const step of reads) expect(step).toMatch(/^SEARCH incidents USING INDEX /);
    expect(plan.join('\n')).toContain('incidents_by_cluster_changed');
  });

  it("a cluster's open ones (every step asks): one index range on cluster and state", async () => {
    const { sql, params } = listIncidentsQuery({ clusterId: 'c1', state: 'open' });
    expect(await planOf(sql, params)).toContainEqual(expect.stringMatching(/^SEARCH incidents USING INDEX \S+ \(cluster_id=\? AND state=\?\)/));
  });

  it("the fleet's open ones (the sweep): the open incidents' index, not the table", async () => {
    const { sql, params } = listIncidentsQuery({ state: 'open' });
    const plan = await planOf(sql, params);
    expect(plan.filter((step) => /\bincidents\b/.test(step))).toEqual([expect.stringMatching(/ USING (COVERING )?INDEX /)]);
  });

  it("the fleet's awaiting ones (the sweep's replacement checks): one index range on state, not a scan of every incident", async () => {
    const { sql, params } = listIncidentsQuery({ state: 'awaiting-replacement' });
    const plan = await planOf(sql, params);
    expect(plan.filter((step) => /\bincidents\b/.test(step))).toEqual([expect.stringMatching(/^SEARCH incidents USING (COVERING )?INDEX \S+ \(state=\?\)/)]);
  });
});
