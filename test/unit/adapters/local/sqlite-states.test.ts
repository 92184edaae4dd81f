// The state file's CHECK on an incident's state is shipped schema, never edited: a new state needs
// a new migration, and this test says so by holding the schema a file gets to the states of the
// incident entity (functions/core/incident/incident.ts), every ending's included.
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { incidentStates } from '../../../../functions/core/incident/incident.ts';
import { endingStates } from '../../../../functions/core/incident/incident-endings.ts';
import { openSqliteStore } from '../../../../functions/adapters/local/sqlite-store.ts';
import { tempDir, type TempDir } from '../../runtime/helpers.ts';

/** The states `CHECK (state IN (...))` allows in the incidents table of a migrated file. */
function checkedStates(file: string): string[] {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const row = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'incidents'`).get();
    const list = /CHECK \(state IN \(([^)]*)\)\)/.exec(String(row?.sql))?.[1];
    if (list === undefined) throw new Error(`the incidents table has no CHECK on its state: ${String(row?.sql)}`);
    return list.split(',').map((s) => s.trim().replace(/^'(.*)'$/, '$1'));
  } finally {
    db.close();
  }
}

describe('the state file and the incident states', () => {
  let dir: TempDir | undefined;
  afterEach(() => dir?.remove());

  it('a migrated file allows exactly the states of the incident entity', async () => {
    dir = tempDir();
    const file = dir.file('state.sqlite');
    const store = openSqliteStore({ path: file });
    await store.close();
    expect([...checkedStates(file)].sort()).toEqual([...incidentStates].sort());
    for (const state of endingStates) expect(checkedStates(file)).toContain(state);
  });

  it('takes an incident into every ending state', async () => {
    dir = tempDir();
    const store = openSqliteStore({ path: dir.file('state.sqlite') });
    try {
      for (const [i, state] of endingStates.entries()) {
        const { incident } = await store.openOrJoin({
          clusterId: 'c1',
          targetKey: `memberName=etcd-${i}`,
          target: { memberName: `etcd-${i}` },
          reason: 'r',
          now: i,
        });
        expect((await store.closeIncident(incident.incidentId, { outcome: state, result: null, now: i + 1 })).state).toBe(state);
      }
    } finally {
      await store.close();
    }
  });
});
