// Opening the SQLite state file, with every way that can fail said in one line that names the
// path and the problem in our words: SQLite's own ("unable to open database file") names neither.
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';

/** A state file that cannot be used: the message names the path and the problem. */
export class StateFileError extends Error {
  readonly path: string;
  constructor(file: string, message: string) {
    super(message);
    this.name = 'StateFileError';
    this.path = file;
  }
}

const problem = (file: string, text: string) => new StateFileError(file, `state file ${file}: ${text}`);

/** A file whose schema is newer than this build's: not ours to read or change. */
export const schemaTooNew = (file: string, version: number, known: number): StateFileError =>
  problem(file, `was written by a newer etcd-remediator (schema ${version}; this one knows up to ${known})`);

/** A file of a build before the base schema: this build cannot carry on its incidents. */
export const schemaTooOld = (file: string, version: number): StateFileError =>
  problem(
    file,
    `was written by an earlier build of etcd-remediator (schema ${version}); finish or close its incidents with that build, or start from a new state file`,
  );

/** An empty file, or a database with no schema of ours, said instead of given one. */
export const holdsNoState = (file: string, empty: boolean): StateFileError =>
  problem(file, `holds no state (${empty ? 'an empty file' : 'a SQLite database without an etcd-remediator schema'})`);

/** SQLite's primary result codes we can name (the extended code's low byte). */
const SQLITE_PROBLEMS: Record<number, string> = {
  5: 'is locked by another process that did not let go within the busy timeout',
  8: 'is read-only: remediate and run write to it (check the permissions of the file and its directory)',
  10: 'cannot be read or written (an I/O error: check the disk)',
  11: 'is damaged: a truncated or corrupt SQLite database',
  13: 'cannot be written: the disk is full',
  14: 'cannot be opened (check that it and its directory exist and can be written)',
  23: 'cannot be opened: permission denied',
  26: 'is not a SQLite database (corrupt, or some other kind of file)',
};

/**
 * Result codes that say the file cannot take a write now but may later (space freed, the disk
 * back): the store backs off and says so once, rather than failing each caller on its own.
 */
const OUTAGE_PROBLEMS: Record<number, string> = {
  8: 'cannot write: read-only (SQLITE_READONLY)',
  10: 'cannot read or write: I/O error (SQLITE_IOERR)',
  13: 'cannot write: disk full (SQLITE_FULL)',
};

/** The state file could not be written (or read) just now: a full disk, an I/O error. It keeps SQLite's codes. */
export class StateIoError extends StateFileError {
  readonly errcode: number;
  readonly code: string;
  constructor(file: string, problemText: string, errcode: number, options: { cause: unknown }) {
    super(file, `state file ${file}: ${problemText}`);
    this.name = 'StateIoError';
    this.errcode = errcode;
    this.code = 'ERR_SQLITE_ERROR';
    this.cause = options.cause;
  }
}

/** A write (or read) of `file` that failed for want of space or a working disk, in our words; undefined for any other error. */
export function stateIoError(file: string, error: unknown): StateIoError | undefined {
  if (error instanceof StateIoError) return error;
  const code = sqliteCode(error);
  const said = code === undefined ? undefined : OUTAGE_PROBLEMS[code];
  if (said === undefined) return undefined;
  return new StateIoError(file, said, (error as { errcode: number }).errcode, { cause: error });
}

const sqliteCode = (error: unknown): number | undefined =>
  error instanceof Error && 'errcode' in error && typeof error.errcode === 'number' ? error.errcode & 0xff : undefined;

/** SQLite's error about `file` in our words; any other error as it is. */
export function describeStateError(file: string, error: unknown): Error {
  if (error instanceof StateFileError) return error;
  const code = sqliteCode(error);
  if (code === undefined) return error instanceof Error ? error : new Error(String(error));
  const known = SQLITE_PROBLEMS[code];
  const said = known ?? `cannot be used as a state file (SQLite error ${code}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)})`;
  return problem(file, said);
}

/** What can be told before SQLite tries: a missing directory, a directory in the file's place, no write access. */
function checkPath(file: string, readOnly: boolean): void {
  const parent = path.dirname(path.resolve(file));
  const statOf = (p: string, what: string): fs.Stats | undefined => {
    try {
      return fs.statSync(p);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      throw problem(
        file,
        code === 'EACCES'
          ? `${what} cannot be reached: permission denied`
          : code === 'ENOTDIR'
            ? `${what}: a part of the path is not a directory`
            : `${what}: ${code ?? String(error)}`,
      );
    }
  };
  const dir = statOf(parent, `directory ${parent}`);
  if (!dir) throw problem(file, `directory ${parent} does not exist`);
  if (!dir.isDirectory()) throw problem(file, `${parent} is not a directory`);
  const stat = statOf(file, 'the file');
  if (!stat && readOnly) throw problem(file, 'does not exist');
  if (stat?.isDirectory()) throw problem(file, 'is a directory');
  if (readOnly) return;
  const writable = (p: string) => {
    try {
      fs.accessSync(p, fs.constants.W_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (stat && !writable(file)) throw problem(file, 'is read-only: remediate and run write to it (check its permissions)');
  // WAL keeps two files beside the database: the directory must take them.
  if (!writable(parent)) throw problem(file, `its directory ${parent} is read-only: SQLite keeps ${path.basename(file)}-wal and -shm beside it`);
}

/**
 * Opens the state file for a process that writes it: WAL, a busy timeout, foreign keys. The
 * first read happens here, so a corrupt or truncated file fails now, as a StateFileError.
 */
export function openStateDatabase(file: string, options: { busyTimeoutMs?: number } = {}): DatabaseSync {
  if (file !== ':memory:') checkPath(file, false);
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file);
    db.exec(`PRAGMA busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5_000)}`);
    // WAL lets readers run alongside the single writer; other processes may open the same file.
    db.exec('PRAGMA journal_mode = WAL');
    // A commit is written, not fsynced: a dead process loses nothing, a power loss only the last
    // commits (the file stays whole), as if the process had died a moment earlier, which every step
    // survives. Waiting for the disk at each of an incident's ~35 commits cost more than all else.
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('PRAGMA foreign_keys = ON');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (error) {
    db?.close();
    throw describeStateError(file, error);
  }
}

/**
 * Opens the state file only to read it: no pragma that writes, no migration. Where SQLite cannot
 * make its WAL index (a read-only directory), nothing can be writing the file either, so it is
 * read as immutable.
 */
export function openStateDatabaseReadOnly(file: string): DatabaseSync {
  checkPath(file, true);
  const open = (target: string | URL) => {
    const db = new DatabaseSync(target, { readOnly: true });
    try {
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  };
  try {
    return open(file);
  } catch (error) {
    const wal = `${file}-wal`;
    const walInUse = fs.existsSync(wal) && fs.statSync(wal).size > 0;
    if (sqliteCode(error) !== 8 || walInUse) throw describeStateError(file, error);
    const url = pathToFileURL(path.resolve(file));
    url.searchParams.set('immutable', '1');
    try {
      return open(url);
    } catch (again) {
      throw describeStateError(file, again);
    }
  }
}
