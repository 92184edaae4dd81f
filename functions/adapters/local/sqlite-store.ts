// The incident store on one local SQLite file (node:sqlite, no native addon). Every operation is a
// single statement or one IMMEDIATE transaction, mirroring the conditional writes of DynamoDB.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from 'node:sqlite';
import type { Decision } from '../../core/decision.ts';
import type { CarriedStreak } from '../../core/evidence.ts';
import { readJournalLine } from '../../core/journal-earlier.ts';
import type { ClusterView } from '../../core/view.ts';
import { remediationHistoryFrom, type RemediationHistory } from '../../core/remediation-history.ts';
import type { RemovalRecord } from '../../core/replacement.ts';
import { MAX_INCIDENT_VIEWS } from '../../core/view-history.ts';
import {
  IncidentNotFoundError,
  VersionConflictError,
  type CloseIncidentInput,
  type InFlight,
  type DeadLetter,
  type DeadLetterInput,
  type Incident,
  type IncidentPatch,
  type IncidentState,
  type IncidentStore,
  type JournalEntry,
  type JournalInput,
  type MarkerStep,
  type OpenIncidentInput,
  type OutboxEntry,
  type StoredTimer,
  type TimerStore,
  type TimerInput,
} from '../../ports/incident-store.ts';
import { migrate, migrations, schemaVersion, SchemaTooNewError } from './sqlite-migrations.ts';
import { describeStateError, holdsNoState, openStateDatabase, openStateDatabaseReadOnly, schemaTooNew, stateIoError, type StateIoError } from './state-file.ts';

export interface SqliteStoreOptions {
  /** A file path; ':memory:' works for a single connection. */
  path: string;
  /** How long a writer waits for another connection's lock before failing. */
  busyTimeoutMs?: number;
  /** Only reads (status): never migrates, never writes, works on a read-only file. */
  readOnly?: boolean;
  /** Told once when the file stops taking writes (a full disk, an I/O error), and once when one lands again. */
  onOutage?: StateOutageListener;
}

export interface StateOutageListener {
  unwritable(error: StateIoError): void;
  writable(outageMs: number): void;
}

/** Since when the file has refused writes, and the first refusal. */
export interface StateOutage {
  since: number;
  error: StateIoError;
}

type Row = Record<string, SQLOutputValue>;
type Params = Record<string, SQLInputValue>;

const SQLITE_CONSTRAINT_FOREIGNKEY = 787;

/** Opens the store; a file that cannot serve is a StateFileError naming the path and the problem. */
export function openSqliteStore(options: SqliteStoreOptions): SqliteIncidentStore {
  const file = options.path;
  const db = options.readOnly ? openStateDatabaseReadOnly(file) : openStateDatabase(file, options);
  try {
    if (options.readOnly) checkReadableSchema(db, file);
    else migrate(db, Date.now());
  } catch (error) {
    db.close();
    if (error instanceof SchemaTooNewError) throw schemaTooNew(file, error.version, error.known);
    throw describeStateError(file, error);
  }
  return new SqliteIncidentStore(db, { file, onOutage: options.onOutage });
}

/** An empty file, or one with no schema of ours, holds no state: said, not created. */
function checkReadableSchema(db: DatabaseSync, file: string): void {
  const version = schemaVersion(db);
  if (version === undefined || version === 0) throw holdsNoState(file, fs.statSync(file).size === 0);
  if (version > migrations.length) throw schemaTooNew(file, version, migrations.length);
}

export class SqliteIncidentStore implements IncidentStore, TimerStore {
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

  async openOrJoin(input: OpenIncidentInput): Promise<{ incident: Incident; joined: boolean }> {
    // IMMEDIATE takes the write lock before the read, so no other connection can open in between;
    // the partial unique index is the backstop if anyone bypasses this path.
    return this.#immediate(() => {
      if (input.incidentId !== undefined) {
        const same = this.#incident(input.incidentId);
        if (same) {
          if (same.clusterId !== input.clusterId || same.targetKey !== input.targetKey) {
            throw new Error(`incident ${input.incidentId} belongs to ${same.clusterId}/${same.targetKey}`);
          }
          return { incident: same, joined: true };
        }
      }
      const open = this.#row(
        `SELECT * FROM incidents WHERE cluster_id = $clusterId AND target_key = $targetKey AND state = 'open'`,
        { clusterId: input.clusterId, targetKey: input.targetKey },
      );
      if (open) return { incident: toIncident(open), joined: true };
      const incidentId = input.incidentId ?? randomUUID();
      this.#run(
        `INSERT INTO incidents (incident_id, cluster_id, target_key, target, reason, state, opened_at, updated_at)
         VALUES ($incidentId, $clusterId, $targetKey, $target, $reason, 'open', $now, $now)`,
        {
          incidentId,
          clusterId: input.clusterId,
          targetKey: input.targetKey,
          target: JSON.stringify(input.target),
          reason: input.reason,
          now: input.now,
        },
      );
      return { incident: this.#incident(incidentId)!, joined: false };
    });
  }

  async getIncident(incidentId: string): Promise<Incident | undefined> {
    return this.#incident(incidentId);
  }

  async listIncidents(filter: { clusterId?: string; state?: IncidentState } = {}): Promise<Incident[]> {
    return this.#rows(
      `SELECT * FROM incidents
       WHERE ($clusterId IS NULL OR cluster_id = $clusterId) AND ($state IS NULL OR state = $state)
       ORDER BY opened_at, incident_id`,
      { clusterId: filter.clusterId ?? null, state: filter.state ?? null },
    ).map(toIncident);
  }

  async updateIncident(
    incidentId: string,
    patch: IncidentPatch,
    options: { expectVersion: number; now: number },
  ): Promise<Incident> {
    const current = this.#incident(incidentId);
    if (!current) throw new IncidentNotFoundError(incidentId);
    if (current.version !== options.expectVersion) {
      throw new VersionConflictError(incidentId, options.expectVersion, current.version);
    }
    // Closing is one way: a closed incident is never closed again, whatever its version.
    if (patch.state !== undefined && current.state !== 'open') {
      throw new VersionConflictError(incidentId, options.expectVersion, current.version);
    }
    const next = { ...current, ...definedOnly(patch) };
    const { changes } = this.#run(
      `UPDATE incidents SET attempt = $attempt, waits = $waits, immediate_reprobes = $immediateReprobes, member_id = $memberId,
         member_name = $memberName, etcd_cluster_id = $etcdClusterId, views = $views, last_decision = $lastDecision, result = $result,
         leader_unreachable = $leaderUnreachable, state = $state, outbox = $outbox, steps_done = $stepsDone,
         in_flight = $inFlight, updated_at = $now, version = version + 1
       WHERE incident_id = $incidentId AND version = $expectVersion`,
      {
        incidentId,
        expectVersion: options.expectVersion,
        now: options.now,
        state: next.state,
        outbox: JSON.stringify(next.outbox),
        stepsDone: JSON.stringify(next.stepsDone),
        inFlight: toJson(next.inFlight ?? undefined),
        attempt: next.attempt,
        immediateReprobes: next.immediateReprobes,
        waits: next.waits,
        memberId: next.memberId ?? null,
        memberName: next.memberName ?? null,
        etcdClusterId: next.etcdClusterId ?? null,
        views: JSON.stringify(next.views.slice(-MAX_INCIDENT_VIEWS)),
        lastDecision: toJson(next.lastDecision),
        result: toJson(next.result),
        leaderUnreachable: toJson(next.leaderUnreachable ?? undefined),
      },
    );
    const stored = this.#incident(incidentId);
    if (!stored) throw new IncidentNotFoundError(incidentId);
    if (changes === 0) throw new VersionConflictError(incidentId, options.expectVersion, stored.version);
    return stored;
  }

  async closeIncident(incidentId: string, input: CloseIncidentInput): Promise<Incident> {
    const { changes } = this.#run(
      `UPDATE incidents SET state = $outcome, result = $result, updated_at = $now, version = version + 1
       WHERE incident_id = $incidentId AND state = 'open' AND ($expectVersion IS NULL OR version = $expectVersion)`,
      {
        incidentId,
        outcome: input.outcome,
        result: toJson(input.result),
        now: input.now,
        expectVersion: input.expectVersion ?? null,
      },
    );
    const stored = this.#incident(incidentId);
    if (!stored) throw new IncidentNotFoundError(incidentId);
    if (changes === 0 && stored.state === 'open') {
      throw new VersionConflictError(incidentId, input.expectVersion ?? stored.version, stored.version);
    }
    return stored;
  }

  async appendJournal(incidentId: string, entry: JournalInput): Promise<void> {
    this.#insertJournal(incidentId, entry, false);
  }

  async journal(incidentId: string): Promise<JournalEntry[]> {
    return this.#rows(
      'SELECT at, step, detail, is_step_marker FROM journal WHERE incident_id = $incidentId ORDER BY seq',
      { incidentId },
    ).map((row) => {
      const detail = optText(row, 'detail');
      // Lines earlier builds wrote as text read through the same reader as today's.
      return readJournalLine({ at: int(row, 'at'), step: text(row, 'step'), detail: detail === undefined ? undefined : JSON.parse(detail), isStepMarker: int(row, 'is_step_marker') === 1 });
    });
  }

  async markStep(incidentId: string, entry: JournalInput & { step: MarkerStep }): Promise<boolean> {
    return this.#insertJournal(incidentId, entry, true);
  }

  async stepDone(incidentId: string, step: MarkerStep): Promise<boolean> {
    return !!this.#row(
      'SELECT 1 AS done FROM journal WHERE incident_id = $incidentId AND step = $step AND is_step_marker = 1',
      { incidentId, step },
    );
  }

  async knownIdentity(clusterId: string): Promise<{ etcdClusterId: string; since: number } | undefined> {
    const row = this.#row('SELECT etcd_cluster_id, since FROM cluster_identities WHERE cluster_id = $clusterId', { clusterId });
    return row && { etcdClusterId: text(row, 'etcd_cluster_id'), since: int(row, 'since') };
  }

  async rememberIdentity(clusterId: string, etcdClusterId: string, at: number): Promise<{ etcdClusterId: string; since: number }> {
    this.#run('INSERT INTO cluster_identities (cluster_id, etcd_cluster_id, since) VALUES ($clusterId, $etcdClusterId, $at) ON CONFLICT DO NOTHING', {
      clusterId,
      etcdClusterId,
      at,
    });
    return (await this.knownIdentity(clusterId))!;
  }

  async acquireLock(clusterId: string, owner: string, leaseMs: number, now: number): Promise<boolean> {
    if (!(leaseMs > 0)) throw new RangeError(`lease must be positive, got ${leaseMs}`);
    // One upsert: take a free lock, renew our own, or steal an expired one; anything else changes nothing.
    const { changes } = this.#run(
      `INSERT INTO cluster_locks (cluster_id, owner, expires_at) VALUES ($clusterId, $owner, $expiresAt)
       ON CONFLICT (cluster_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE cluster_locks.owner = excluded.owner OR cluster_locks.expires_at <= $now`,
      { clusterId, owner, expiresAt: now + leaseMs, now },
    );
    return changes === 1;
  }

  async releaseLock(clusterId: string, owner: string): Promise<boolean> {
    const { changes } = this.#run('DELETE FROM cluster_locks WHERE cluster_id = $clusterId AND owner = $owner', {
      clusterId,
      owner,
    });
    return changes === 1;
  }

  async removalRecords(clusterId: string): Promise<RemovalRecord[]> {
    const row = this.#row('SELECT records FROM cluster_removals WHERE cluster_id = $clusterId', { clusterId });
    return row ? (JSON.parse(text(row, 'records')) as RemovalRecord[]) : [];
  }

  async saveRemovalRecords(clusterId: string, records: RemovalRecord[]): Promise<void> {
    this.#run('INSERT INTO cluster_removals (cluster_id, records) VALUES ($clusterId, $records) ON CONFLICT (cluster_id) DO UPDATE SET records = excluded.records', {
      clusterId,
      records: JSON.stringify(records),
    });
  }

  async putDeadLetter(input: DeadLetterInput): Promise<DeadLetter> {
    const letter: DeadLetter = { id: randomUUID(), ...input };
    this.#run(
      `INSERT INTO dead_letters (id, received_at, source, detail_type, payload, error)
       VALUES ($id, $receivedAt, $source, $detailType, $payload, $error)`,
      { ...letter },
    );
    return letter;
  }

  async listDeadLetters(): Promise<DeadLetter[]> {
    return this.#rows('SELECT * FROM dead_letters ORDER BY seq', {}).map((row) => ({
      id: text(row, 'id'),
      receivedAt: int(row, 'received_at'),
      source: text(row, 'source'),
      detailType: text(row, 'detail_type'),
      payload: text(row, 'payload'),
      error: text(row, 'error'),
    }));
  }

  async recordRemediation(clusterId: string, targetKey: string, at: number): Promise<void> {
    this.#run(
      `INSERT INTO remediations (cluster_id, target_key, at) VALUES ($clusterId, $targetKey, $at)
       ON CONFLICT DO NOTHING`,
      { clusterId, targetKey, at },
    );
  }

  async remediationHistory(
    clusterId: string,
    targetKey: string,
    options: { minHealthyPeriodMs: number; now: number },
  ): Promise<RemediationHistory> {
    const times = this.#rows(
      'SELECT at FROM remediations WHERE cluster_id = $clusterId AND target_key = $targetKey ORDER BY at',
      { clusterId, targetKey },
    ).map((row) => int(row, 'at'));
    return remediationHistoryFrom(times, options);
  }

  async putTimer(input: TimerInput): Promise<StoredTimer> {
    // In a transaction of its own: on its own, a statement with RETURNING commits when it is reset,
    // and node:sqlite drops an error there, so a full disk would lose the timer without a word.
    const row = this.#immediate(() =>
      this.#writeRow(
        `INSERT INTO timers (name, fire_at, payload, revision) VALUES ($name, $fireAt, $payload, 1)
         ON CONFLICT (name) DO UPDATE SET fire_at = excluded.fire_at, payload = excluded.payload,
           revision = timers.revision + 1
         RETURNING *`,
        { name: input.name, fireAt: input.fireAt, payload: JSON.stringify(input.payload ?? null) },
      ),
    );
    return toTimer(row!);
  }

  async dueTimers(now: number): Promise<StoredTimer[]> {
    return this.#rows('SELECT * FROM timers WHERE fire_at <= $now ORDER BY fire_at, name', { now }).map(toTimer);
  }

  async deleteTimer(name: string, revision?: number): Promise<boolean> {
    const { changes } = this.#run(
      'DELETE FROM timers WHERE name = $name AND ($revision IS NULL OR revision = $revision)',
      { name, revision: revision ?? null },
    );
    return changes === 1;
  }

  async nextTimer(): Promise<StoredTimer | undefined> {
    const row = this.#row('SELECT * FROM timers ORDER BY fire_at, name LIMIT 1', {});
    return row && toTimer(row);
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }

  #insertJournal(incidentId: string, entry: JournalInput, isStepMarker: boolean): boolean {
    try {
      const { changes } = this.#run(
        `INSERT INTO journal (incident_id, at, step, detail, is_step_marker)
         VALUES ($incidentId, $at, $step, $detail, $isStepMarker)
         ON CONFLICT (incident_id, step) WHERE is_step_marker = 1 DO NOTHING`,
        { incidentId, at: entry.at, step: entry.step, detail: toJson(entry.detail), isStepMarker: isStepMarker ? 1 : 0 },
      );
      return changes === 1;
    } catch (error) {
      if (sqliteErrcode(error) === SQLITE_CONSTRAINT_FOREIGNKEY) throw new IncidentNotFoundError(incidentId);
      throw error;
    }
  }

  #incident(incidentId: string): Incident | undefined {
    const row = this.#row('SELECT * FROM incidents WHERE incident_id = $incidentId', { incidentId });
    return row && toIncident(row);
  }

  #immediate<T>(work: () => T): T {
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

  #run(sql: string, params: Params) {
    const result = this.#guard(() => this.#statement(sql).run(params));
    if (Number(result.changes) > 0) this.#landed();
    return result;
  }

  #row(sql: string, params: Params): Row | undefined {
    return this.#guard(() => this.#statement(sql).get(params));
  }

  /** A write that returns its row (INSERT … RETURNING). */
  #writeRow(sql: string, params: Params): Row | undefined {
    const row = this.#row(sql, params);
    if (row) this.#landed();
    return row;
  }

  #rows(sql: string, params: Params): Row[] {
    return this.#guard(() => this.#statement(sql).all(params));
  }
}

function toIncident(row: Row): Incident {
  const incident: Incident = {
    incidentId: text(row, 'incident_id'),
    clusterId: text(row, 'cluster_id'),
    targetKey: text(row, 'target_key'),
    target: JSON.parse(text(row, 'target')) as Record<string, string>,
    reason: text(row, 'reason'),
    state: text(row, 'state') as IncidentState,
    openedAt: int(row, 'opened_at'),
    updatedAt: int(row, 'updated_at'),
    attempt: int(row, 'attempt'),
    immediateReprobes: int(row, 'immediate_reprobes'),
    waits: int(row, 'waits'),
    views: JSON.parse(text(row, 'views')) as ClusterView[],
    outbox: JSON.parse(text(row, 'outbox')) as OutboxEntry[],
    stepsDone: JSON.parse(text(row, 'steps_done')) as string[],
    version: int(row, 'version'),
  };
  const inFlight = optText(row, 'in_flight');
  if (inFlight !== undefined) incident.inFlight = JSON.parse(inFlight) as InFlight;
  const memberId = optText(row, 'member_id');
  if (memberId !== undefined) incident.memberId = memberId;
  const memberName = optText(row, 'member_name');
  if (memberName !== undefined) incident.memberName = memberName;
  const etcdClusterId = optText(row, 'etcd_cluster_id');
  if (etcdClusterId !== undefined) incident.etcdClusterId = etcdClusterId;
  const lastDecision = optText(row, 'last_decision');
  if (lastDecision !== undefined) incident.lastDecision = JSON.parse(lastDecision) as Decision;
  const leaderUnreachable = optText(row, 'leader_unreachable');
  if (leaderUnreachable !== undefined) incident.leaderUnreachable = JSON.parse(leaderUnreachable) as CarriedStreak;
  const result = optText(row, 'result');
  if (result !== undefined) incident.result = JSON.parse(result);
  return incident;
}

function toTimer(row: Row): StoredTimer {
  return {
    name: text(row, 'name'),
    fireAt: int(row, 'fire_at'),
    payload: JSON.parse(text(row, 'payload')),
    revision: int(row, 'revision'),
  };
}

/** A patch key set to undefined means "leave as is", so patches can be built conditionally. */
function definedOnly(patch: IncidentPatch): IncidentPatch {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
}

const toJson = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

function text(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw new TypeError(`column ${column}: expected text, got ${typeof value}`);
  return value;
}

function optText(row: Row, column: string): string | undefined {
  const value = row[column];
  return value === null || value === undefined ? undefined : text(row, column);
}

function int(row: Row, column: string): number {
  const value = row[column];
  if (typeof value !== 'number') throw new TypeError(`column ${column}: expected integer, got ${typeof value}`);
  return value;
}

function sqliteErrcode(error: unknown): number | undefined {
  if (error instanceof Error && 'errcode' in error && typeof error.errcode === 'number') return error.errcode;
  return undefined;
}
