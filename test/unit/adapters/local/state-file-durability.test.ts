// The state file in WAL mode commits without an fsync of its own (synchronous NORMAL): a process
// that dies loses nothing it committed, and the file stays whole after a power loss, where only
// the last commits can be lost, as if the process had died a moment earlier, which every step
// already survives (it resumes from what the file says; the lock and removal record live in etcd).
// A commit that waited for the disk cost each incident about 35 fsyncs.
import { afterEach, describe, expect, it } from 'vitest';
import { openStateDatabase } from '../../../../functions/adapters/local/state-file.ts';
import { tempDir, type TempDir } from '../../runtime/helpers.ts';

let dir: TempDir;
afterEach(() => dir.remove());

describe('state file durability', () => {
  it('is WAL with synchronous NORMAL on the connection that writes it', () => {
    dir = tempDir();
    const db = openStateDatabase(dir.file('state.sqlite'));
    try {
      expect(db.prepare('PRAGMA journal_mode').get()?.journal_mode).toBe('wal');
      // 1 is NORMAL, 2 FULL (SQLite's default).
      expect(db.prepare('PRAGMA synchronous').get()?.synchronous).toBe(1);
    } finally {
      db.close();
    }
  });
});
