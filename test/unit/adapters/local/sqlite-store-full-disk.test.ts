// The SQLite store on a real full disk: a write fails with one line naming the state file and the
// problem, the outage is told once however many writes fail, reads go on, and the first write that
// lands once space is back is told once too.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteIncidentStore } from '../../../../functions/adapters/local/sqlite-store.ts';
import { StateIoError } from '../../../../functions/adapters/local/state-file.ts';
import { fullDiskUnavailable, smallDisk, type SmallDisk } from '../../../support/full-disk.ts';

const title = fullDiskUnavailable ? `sqlite store on a full disk (skipped: ${fullDiskUnavailable})` : 'sqlite store on a full disk';

describe.skipIf(fullDiskUnavailable !== undefined)(title, () => {
  let disk: SmallDisk;
  let file: string;
  let store: SqliteIncidentStore;
  let told: string[];

  beforeEach(() => {
    disk = smallDisk();
    file = path.join(disk.dir, 'state.sqlite');
    told = [];
    store = openSqliteStore({
      path: file,
      onOutage: { unwritable: (error) => told.push(`unwritable: ${error.message}`), writable: () => told.push('writable') },
    });
  });
  afterEach(async () => {
    await store.close();
    disk.remove();
  });

  it('names the file and the problem, says it once, and says once when writes land again', async () => {
    const kept = await store.putTimer({ name: 'kept', fireAt: 1, payload: { detailType: 'RetryDue' } });
    disk.fill();
    const problem = `state file ${file}: cannot write: disk full (SQLITE_FULL)`;
    for (let i = 0; i < 20; i++) {
      const failed = await store.putTimer({ name: `t${i}`, fireAt: 2, payload: null }).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(StateIoError);
      expect((failed as Error).message).toBe(problem);
    }
    // A transaction fails the same way and leaves none open behind it.
    await expect(store.openOrJoin({ clusterId: 'c', targetKey: 'memberName=m', target: { memberName: 'm' }, reason: 'r', now: 1 })).rejects.toThrow(problem);
    await expect(store.deleteTimer('kept', kept.revision)).rejects.toThrow(problem);
    expect(await store.dueTimers(Number.MAX_SAFE_INTEGER)).toMatchObject([{ name: 'kept' }]);
    expect(told).toEqual([`unwritable: ${problem}`]);
    expect(store.outage).toMatchObject({ error: { message: problem } });

    disk.free();
    // A write that changes nothing writes nothing, so it says nothing about the disk.
    expect(await store.deleteTimer('never-put')).toBe(false);
    expect(told).toHaveLength(1);
    const { incident } = await store.openOrJoin({ clusterId: 'c', targetKey: 'memberName=m', target: { memberName: 'm' }, reason: 'r', now: 1 });
    expect(await store.getIncident(incident.incidentId)).toMatchObject({ state: 'open' });
    expect(await store.deleteTimer('kept')).toBe(true);
    expect(told).toEqual([`unwritable: ${problem}`, 'writable']);
    expect(store.outage).toBeUndefined();
  });
});
