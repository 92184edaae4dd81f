// One process owns a state file at a time. Two processes on one file would each run, resume and
// time out the other's incidents. The owner holds a lease row in the file itself (pid, host, the
// process's start time), taken in one IMMEDIATE transaction and renewed while it runs. A second
// process is refused at once; a lease whose process is gone is taken over.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import type { DatabaseSync } from 'node:sqlite';
import { migrate, SchemaTooNewError, SchemaTooOldError } from './sqlite-migrations.ts';
import { describeStateError, openStateDatabase, schemaTooNew, schemaTooOld, StateFileError } from './state-file.ts';

export interface StateOwner {
  pid: number;
  host: string;
  /** The process's start as /proc gives it, so a reused pid is not mistaken for the owner; '' if unknown. */
  procStart: string;
  /** When it took the file. */
  startedAt: number;
  renewedAt: number;
}

/** The file is someone else's: "state file F in use by pid N since T". */
export class StateFileInUseError extends StateFileError {
  readonly owner: StateOwner;
  constructor(file: string, owner: StateOwner) {
    const where = owner.host === os.hostname() ? '' : ` on ${owner.host}`;
    super(file, `state file ${file} in use by pid ${owner.pid}${where} since ${new Date(owner.startedAt).toISOString()}`);
    this.name = 'StateFileInUseError';
    this.owner = owner;
  }
}

export interface StateOwnerOptions {
  /** How often the lease is renewed (default 5 s). */
  renewEveryMs?: number;
  /** A lease from another host, whose pid cannot be checked, lapses when not renewed for this long (default 30 s). */
  ttlMs?: number;
  /** Told when a renewal finds the lease taken by another process: this one must stop. */
  onLost?: (by: StateOwner) => void;
  now?: () => number;
}

export interface StateOwnership {
  readonly owner: StateOwner;
  /** Gives the file up; idempotent. */
  release(): void;
}

/** The start time of a process, from /proc; '' where there is no /proc. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state (field 3 of proc(5)); a zombie is as good as gone.
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19] ?? '';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && fs.existsSync('/proc/self')) return undefined;
    return isAlive(pid) ? '' : undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the lease still binds: its process runs (same host), or it was renewed lately (another host). */
function holds(owner: StateOwner, now: number, ttlMs: number): boolean {
  if (owner.host !== os.hostname()) return now - owner.renewedAt < ttlMs;
  const start = processStart(owner.pid);
  if (start === undefined) return false;
  return owner.procStart === '' || start === '' || start === owner.procStart;
}

type Row = Record<string, unknown>;

const toOwner = (row: Row): StateOwner => ({
  pid: Number(row.pid),
  host: String(row.host),
  procStart: String(row.proc_start),
  startedAt: Number(row.started_at),
  renewedAt: Number(row.renewed_at),
});

/** Takes the state file for this process, or throws StateFileInUseError (or StateFileError). */
export function ownStateFile(file: string, options: StateOwnerOptions = {}): StateOwnership {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? 30_000;
  const db = openStateDatabase(file);
  const token = randomUUID();
  let owner: StateOwner;
  try {
    migrate(db, now());
    owner = take(db, file, token, now(), ttlMs);
  } catch (error) {
    db.close();
    if (error instanceof SchemaTooNewError) throw schemaTooNew(file, error.version, error.known);
    if (error instanceof SchemaTooOldError) throw schemaTooOld(file, error.version);
    throw describeStateError(file, error);
  }
  const renewal = setInterval(() => {
    try {
      const { changes } = db.prepare('UPDATE state_owner SET renewed_at = $now WHERE id = 1 AND token = $token').run({ now: now(), token });
      if (changes === 1) return;
      clearInterval(renewal);
      const row = db.prepare('SELECT * FROM state_owner WHERE id = 1').get();
      if (row) options.onLost?.(toOwner(row));
    } catch {
      // A busy file this time: the next renewal tries again, well inside the lease.
    }
  }, options.renewEveryMs ?? 5_000);
  renewal.unref();
  let released = false;
  return {
    owner,
    release() {
      if (released) return;
      released = true;
      clearInterval(renewal);
      try {
        db.prepare('DELETE FROM state_owner WHERE id = 1 AND token = $token').run({ token });
      } catch {
        // The process is leaving: its pid will be gone, and the next owner takes the lease over.
      }
      db.close();
    },
  };
}

function take(db: DatabaseSync, file: string, token: string, now: number, ttlMs: number): StateOwner {
  // IMMEDIATE: the check and the write are one step, so two processes starting together cannot both win.
  db.exec('BEGIN IMMEDIATE');
  try {
    const row = db.prepare('SELECT * FROM state_owner WHERE id = 1').get();
    if (row && holds(toOwner(row), now, ttlMs)) throw new StateFileInUseError(file, toOwner(row));
    const owner: StateOwner = { pid: process.pid, host: os.hostname(), procStart: processStart(process.pid) ?? '', startedAt: now, renewedAt: now };
    db.prepare(
      `INSERT OR REPLACE INTO state_owner (id, pid, host, proc_start, started_at, renewed_at, token)
       VALUES (1, $pid, $host, $procStart, $startedAt, $renewedAt, $token)`,
    ).run({ ...owner, token });
    db.exec('COMMIT');
    return owner;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
