// A remediation request looks for its incident among the ones it can follow, however many
// incidents its cluster had before it was made.
import { afterEach, describe, expect, it } from 'vitest';
import { targetKeyOf } from '../../../functions/core/view/target.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { incidentsSince } from '../../../infra/kubernetes/request-history.ts';
import { incidentOfRequest } from '../../../infra/kubernetes/request-incident.ts';
import { tempDir, type TempDir } from '../runtime/helpers.ts';

const MADE_AT = 10_000_000;

let dir: TempDir;
let store: SqliteIncidentStore;
afterEach(async () => {
  await store.close();
  dir.remove();
});

const open = async (machineName: string, now: number) =>
  (await store.openOrJoin({ clusterId: 'c1', targetKey: targetKeyOf({ machineName }), target: { machineName }, reason: 'mhc', now })).incident;

describe('the incidents a request reads', () => {
  it('are its own and the open ones, not the 300 that ended before it was made', async () => {
    dir = tempDir();
    store = openSqliteStore({ path: dir.file('state.sqlite') });
    for (let i = 0; i < 300; i += 1) {
      const old = await open(`old-${i}`, i);
      await store.closeIncident(old.incidentId, { outcome: 'blocked', result: null, now: i + 1 });
    }
    const stillOpen = await open('stuck', 5);
    const own = await open('cp-1', MADE_AT + 10);
    const read = await incidentsSince(store, 'c1', MADE_AT);
    expect(read.map((i) => i.incidentId).sort()).toEqual([stillOpen.incidentId, own.incidentId].sort());
    expect(incidentOfRequest(read, 'cp-1', MADE_AT)?.incidentId).toBe(own.incidentId);
  });
});
