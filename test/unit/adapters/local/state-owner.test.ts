// One process owns a state file at a time: a lease row in the file, taken in one IMMEDIATE
// transaction. A live owner refuses the next at once; a dead one's lease is taken over.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../../functions/adapters/local/sqlite-store.ts';
import { ownStateFile, StateFileInUseError, type StateOwnerOptions, type StateOwnership } from '../../../../functions/adapters/local/state-owner.ts';
import { tempDir, waitFor, type TempDir } from '../../runtime/helpers.ts';

describe('state-file ownership', () => {
  let dir: TempDir;
  let file: string;
  const held: StateOwnership[] = [];
  const own = (options?: StateOwnerOptions) => {
    const ownership = ownStateFile(file, options);
    held.push(ownership);
    return ownership;
  };

  /** A lease row as another process would have left it. */
  const leaveLease = async (row: { pid: number; host?: string; procStart?: string; startedAt?: number; renewedAt?: number }) => {
    await openSqliteStore({ path: file }).close();
    const db = new DatabaseSync(file);
    try {
      db.prepare(
        `INSERT OR REPLACE INTO state_owner (id, pid, host, proc_start, started_at, renewed_at, token)
         VALUES (1, $pid, $host, $procStart, $startedAt, $renewedAt, 'left-behind')`,
      ).run({
        pid: row.pid,
        host: row.host ?? os.hostname(),
        procStart: row.procStart ?? '',
        startedAt: row.startedAt ?? 1_000,
        renewedAt: row.renewedAt ?? Date.now(),
      });
    } finally {
      db.close();
    }
  };

  /** A pid that named a process a moment ago and names none now. */
  const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid;

  beforeEach(() => {
    dir = tempDir();
    file = dir.file('state.sqlite');
  });
  afterEach(() => {
    for (const ownership of held.splice(0)) ownership.release();
    dir.remove();
  });

  it('refuses a second owner while the first runs, naming its pid and since when', () => {
    const first = own({ now: () => Date.parse('2030-01-02T03:04:05.678Z') });
    expect(first.owner.pid).toBe(process.pid);
    let refused: unknown;
    try {
      own();
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(StateFileInUseError);
    expect((refused as Error).message).toBe(`state file ${file} in use by pid ${process.pid} since 2030-01-02T03:04:05.678Z`);
  });

  it('is free again once released', () => {
    own().release();
    expect(own().owner.pid).toBe(process.pid);
  });

  it('takes over the lease of a pid that is gone', async () => {
    await leaveLease({ pid: deadPid() });
    expect(own().owner.pid).toBe(process.pid);
  });

  it('takes over the lease of a pid now used by another process (its start time differs)', async () => {
    await leaveLease({ pid: process.pid, procStart: 'another start' });
    expect(own().owner.pid).toBe(process.pid);
  });

  it('holds a lease from another host until it lapses unrenewed', async () => {
    const now = Date.now();
    await leaveLease({ pid: 1, host: 'elsewhere', renewedAt: now - 1_000 });
    expect(() => own({ ttlMs: 30_000 })).toThrow(/in use by pid 1 on elsewhere since/);
    await leaveLease({ pid: 1, host: 'elsewhere', renewedAt: now - 31_000 });
    expect(own({ ttlMs: 30_000 }).owner.pid).toBe(process.pid);
  });

  it('tells its owner when the lease was taken over, naming who has it', async () => {
    const lost: number[] = [];
    own({ renewEveryMs: 10, onLost: (by) => lost.push(by.pid) });
    await leaveLease({ pid: 4_242_424 });
    await waitFor(() => lost.length > 0, 'the renewal to notice the takeover');
    expect(lost).toEqual([4_242_424]);
  });
});
