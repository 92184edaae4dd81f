// What every part of the SQLite store shares: the database and its file, the prepared statements,
// the statement helpers that turn a full or failing disk into a StateIoError (told once per outage),
// one IMMEDIATE transaction, and the codecs of a row's columns.
import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from 'node:sqlite';
import { stateIoError, type StateIoError } from './state-file.ts';

export interface StateOutageListener {
  unwritable(error: StateIoError): void;
  writable(outageMs: number): void;
}

/** Since when the file has refused writes, and the first refusal. */
export interface StateOutage {
  since: number;
  error: StateIoError;
}

export type Row = Record<string, SQLOutputValue>;
export type Params = Record<string, SQLInputValue>;

export const SQLITE_CONSTRAINT_FOREIGNKEY = 787;

export class SqliteContext {
  readonly #db: DatabaseSync;
  readonly #file: string;
  readonly #listener: StateOutageListener | undefined;
  readonly #statements = new Map<string, StatementSync>();
  #outage: StateOutage | undefined;
  /** A write inside the open transaction: it has landed only once the transaction commits. */
  #wroteInTransaction = false;

  constructor(db: DatabaseSync, options: { file: string; onOutage?: StateOutageListener | undefined }) {
    this.#db = db;
    this.#file = options.file;
    this.#listener = options.onOutage;
  }

  /** Set while the file refuses writes: since the first refusal, until a write lands again. */
  get outage(): StateOutage | undefined {
    return this.#outage;
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  /** Runs `work` in one BEGIN IMMEDIATE transaction: the write lock is taken before its first read. */
  transaction<T>(work: () => T): T {
    this.#guard(() => this.#db.exec('BEGIN IMMEDIATE'));
    this.#wroteInTransaction = false;
    try {
      const result = work();
      // In WAL mode the pages reach the disk at COMMIT: that is where a full disk shows.
      this.#guard(() => this.#db.exec('COMMIT'));
      if (this.#wroteInTransaction) this.#landed();
      return result;
    } catch (error) {
      // SQLite may have rolled back already (it does on SQLITE_FULL); the work's own error is the one to report.
      try {
        if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      } catch {
        // Nothing to add: a transaction that cannot roll back is discarded when the connection closes.
      }
      throw error;
    } finally {
      this.#wroteInTransaction = false;
    }
  }

  run(sql: string, params: Params) {
    const result = this.#guard(() => this.#statement(sql).run(params));
    if (Number(result.changes) > 0) this.#landed();
    return result;
  }

  row(sql: string, params: Params): Row | undefined {
    return this.#guard(() => this.#statement(sql).get(params));
  }

  /** A write that returns its row (INSERT … RETURNING). */
  writeRow(sql: string, params: Params): Row | undefined {
    const row = this.row(sql, params);
    if (row) this.#landed();
    return row;
  }

  rows(sql: string, params: Params): Row[] {
    return this.#guard(() => this.#statement(sql).all(params));
  }

  /** One call on the file: a full disk or a failing disk becomes a StateIoError, told once per outage. */
  #guard<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      const outage = stateIoError(this.#file, error);
      if (!outage) throw error;
      if (!this.#outage) {
        this.#outage = { since: Date.now(), error: outage };
        this.#listener?.unwritable(outage);
      }
      throw outage;
    }
  }

  /** A write reached the file: an outage, if any, is over. A write that changed nothing proves nothing. */
  #landed(): void {
    if (this.#db.isTransaction) {
      this.#wroteInTransaction = true;
      return;
    }
    const outage = this.#outage;
    if (!outage) return;
    this.#outage = undefined;
    this.#listener?.writable(Date.now() - outage.since);
  }

  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

export const toJson = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

export function text(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw new TypeError(`column ${column}: expected text, got ${typeof value}`);
  return value;
}

export function optText(row: Row, column: string): string | undefined {
  const value = row[column];
  return value === null || value === undefined ? undefined : text(row, column);
}

export function int(row: Row, column: string): number {
  const value = row[column];
  if (typeof value !== 'number') throw new TypeError(`column ${column}: expected integer, got ${typeof value}`);
  return value;
}

export function sqliteErrcode(error: unknown): number | undefined {
  if (error instanceof Error && 'errcode' in error && typeof error.errcode === 'number') return error.errcode;
  return undefined;
}
