// The incident store on one local SQLite file (node:sqlite, no native addon). Every operation is a
// single statement or one IMMEDIATE transaction, mirroring the conditional writes of DynamoDB.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { RemediationHistory } from '../../core/removal/index.ts';
import type { HygieneRecord } from '../../core/hygiene/index.ts';
import type { MaintenanceRecord } from '../../core/maintenance/index.ts';
import type { RemovalRecord } from '../../core/replacement/index.ts';
import type { ClusterOpened, FleetMark, FleetPauses, RemovalSlot, SlotRequest, SlotTaken } from '../../ports/fleet.ts';
import type {
  CloseIncidentInput,
  DeadLetter,
  DeadLetterInput,
  Incident,
  IncidentPatch,
  IncidentFilter,
  IncidentStore,
  JournalEntry,
  JournalInput,
  MarkerStep,
  OpenIncidentInput,
  StoredHygiene,
  StoredMaintenance,
  StoredTimer,
  TimerStore,
  TimerInput,
} from '../../ports/incident-store.ts';
import { SqliteContext, type StateOutage, type StateOutageListener } from './sqlite-context.ts';
import { closeIncident, getIncident, listIncidents, openOrJoin, updateIncident } from './sqlite-incidents.ts';
import {
  endStorm,
  fleetPauses,
  fleetRoster,
  noteFleet,
  noteOpened,
  openedSince,
  releaseRemovalSlot,
  removalSlots,
  setPause,
  takeRemovalSlot,
} from './sqlite-fleet.ts';
import { hygieneRecord, hygieneRecords, maintenanceRecord, maintenanceRecords, saveHygieneRecord, saveMaintenanceRecord } from './sqlite-cluster-records.ts';
import { appendJournal, journal, markStep, stepDone } from './sqlite-journal.ts';
import { BASE_VERSION, migrate, SCHEMA_VERSION, schemaVersion, SchemaTooNewError, SchemaTooOldError } from './sqlite-migrations.ts';
import {
  acquireLock,
  knownIdentity,
  learnerSightings,
  listDeadLetters,
  putDeadLetter,
  recordRemediation,
  releaseLock,
  removalRecords,
  saveLearnerSightings,
  saveRemovalRecords,
  rememberIdentity,
  remediationHistory,
} from './sqlite-records.ts';
import { deleteTimer, dueTimers, nextTimer, putTimer } from './sqlite-timers.ts';
import { describeStateError, holdsNoState, openStateDatabase, openStateDatabaseReadOnly, schemaTooNew, schemaTooOld } from './state-file.ts';

export type { StateOutage, StateOutageListener } from './sqlite-context.ts';

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
    if (error instanceof SchemaTooOldError) throw schemaTooOld(file, error.version);
    throw describeStateError(file, error);
  }
  return new SqliteIncidentStore(db, { file, onOutage: options.onOutage });
}

/** An empty file, or one with no schema of ours, holds no state: said, not created. */
function checkReadableSchema(db: DatabaseSync, file: string): void {
  const version = schemaVersion(db);
  if (version === undefined || version === 0) throw holdsNoState(file, fs.statSync(file).size === 0);
  if (version > SCHEMA_VERSION) throw schemaTooNew(file, version, SCHEMA_VERSION);
  if (version < BASE_VERSION) throw schemaTooOld(file, version);
}

export class SqliteIncidentStore implements IncidentStore, TimerStore {
  readonly #ctx: SqliteContext;
  /** The file as another host's remediator reads it in a hold: its full path and this host's name. */
  readonly where: string;

  constructor(db: DatabaseSync, options: { file: string; onOutage?: StateOutageListener | undefined }) {
    this.#ctx = new SqliteContext(db, options);
    this.where = options.file === ':memory:' ? 'an in-memory state store' : `state file ${path.resolve(options.file)} on ${os.hostname()}`;
  }

  /** Set while the file refuses writes: since the first refusal, until a write lands again. */
  get outage(): StateOutage | undefined {
    return this.#ctx.outage;
  }

  /**
   * Writes one row and commits: throws while the file refuses writes, and once it takes them again
   * ends the outage (its listener says so), when nothing else would write to find out.
   */
  probeWrite(): void {
    this.#ctx.transaction(() =>
      this.#ctx.run('INSERT INTO write_probe (id, at) VALUES (1, $at) ON CONFLICT (id) DO UPDATE SET at = excluded.at', { at: Date.now() }),
    );
  }

  openOrJoin(input: OpenIncidentInput): Promise<{ incident: Incident; joined: boolean }> {
    return openOrJoin(this.#ctx, input);
  }

  getIncident(incidentId: string): Promise<Incident | undefined> {
    return getIncident(this.#ctx, incidentId);
  }

  listIncidents(filter: IncidentFilter = {}): Promise<Incident[]> {
    return listIncidents(this.#ctx, filter);
  }

  updateIncident(incidentId: string, patch: IncidentPatch, options: { expectVersion: number; now: number }): Promise<Incident> {
    return updateIncident(this.#ctx, incidentId, patch, options);
  }

  closeIncident(incidentId: string, input: CloseIncidentInput): Promise<Incident> {
    return closeIncident(this.#ctx, incidentId, input);
  }

  appendJournal(incidentId: string, entry: JournalInput): Promise<void> {
    return appendJournal(this.#ctx, incidentId, entry);
  }

  journal(incidentId: string): Promise<JournalEntry[]> {
    return journal(this.#ctx, incidentId);
  }

  markStep(incidentId: string, entry: JournalInput & { step: MarkerStep }): Promise<boolean> {
    return markStep(this.#ctx, incidentId, entry);
  }

  stepDone(incidentId: string, step: MarkerStep): Promise<boolean> {
    return stepDone(this.#ctx, incidentId, step);
  }

  knownIdentity(clusterId: string): Promise<{ etcdClusterId: string; since: number } | undefined> {
    return knownIdentity(this.#ctx, clusterId);
  }

  rememberIdentity(clusterId: string, etcdClusterId: string, at: number): Promise<{ etcdClusterId: string; since: number }> {
    return rememberIdentity(this.#ctx, clusterId, etcdClusterId, at);
  }

  acquireLock(clusterId: string, owner: string, leaseMs: number, now: number): Promise<boolean> {
    return acquireLock(this.#ctx, clusterId, owner, leaseMs, now);
  }

  releaseLock(clusterId: string, owner: string): Promise<boolean> {
    return releaseLock(this.#ctx, clusterId, owner);
  }

  removalRecords(clusterId: string): Promise<RemovalRecord[]> {
    return removalRecords(this.#ctx, clusterId);
  }

  saveRemovalRecords(clusterId: string, records: RemovalRecord[]): Promise<void> {
    return saveRemovalRecords(this.#ctx, clusterId, records);
  }

  learnerSightings(clusterId: string): Promise<Record<string, number>> {
    return learnerSightings(this.#ctx, clusterId);
  }

  saveLearnerSightings(clusterId: string, seen: Readonly<Record<string, number>>): Promise<Record<string, number>> {
    return saveLearnerSightings(this.#ctx, clusterId, seen);
  }

  hygieneRecord(clusterId: string): Promise<StoredHygiene | undefined> {
    return hygieneRecord(this.#ctx, clusterId);
  }

  saveHygieneRecord(clusterId: string, record: HygieneRecord, expectVersion: number): Promise<number> {
    return saveHygieneRecord(this.#ctx, clusterId, record, expectVersion);
  }

  maintenanceRecord(clusterId: string): Promise<StoredMaintenance | undefined> {
    return maintenanceRecord(this.#ctx, clusterId);
  }

  saveMaintenanceRecord(clusterId: string, record: MaintenanceRecord, expectVersion: number): Promise<number> {
    return saveMaintenanceRecord(this.#ctx, clusterId, record, expectVersion);
  }

  /** Every cluster's leader-hygiene record (the state file's own list: a local run has no registry of clusters). */
  hygieneRecords(): Promise<(StoredHygiene & { clusterId: string })[]> {
    return hygieneRecords(this.#ctx);
  }

  /** Every cluster's maintenance record: status's lines. */
  maintenanceRecords(): Promise<(StoredMaintenance & { clusterId: string })[]> {
    return maintenanceRecords(this.#ctx);
  }

  putDeadLetter(input: DeadLetterInput): Promise<DeadLetter> {
    return putDeadLetter(this.#ctx, input);
  }

  listDeadLetters(): Promise<DeadLetter[]> {
    return listDeadLetters(this.#ctx);
  }

  recordRemediation(clusterId: string, targetKey: string, at: number): Promise<void> {
    return recordRemediation(this.#ctx, clusterId, targetKey, at);
  }

  remediationHistory(clusterId: string, targetKey: string, options: { minHealthyPeriodMs: number; now: number }): Promise<RemediationHistory> {
    return remediationHistory(this.#ctx, clusterId, targetKey, options);
  }

  fleetPauses(): Promise<FleetPauses> {
    return fleetPauses(this.#ctx);
  }

  setPause(clusterId: string | undefined, mark: FleetMark | null): Promise<boolean> {
    return setPause(this.#ctx, clusterId, mark);
  }

  endStorm(mark: FleetMark): Promise<void> {
    return endStorm(this.#ctx, mark);
  }

  noteFleet(clusterIds: readonly string[], options: { replace: boolean }): Promise<void> {
    return noteFleet(this.#ctx, clusterIds, options, Date.now());
  }

  fleetRoster(): Promise<string[]> {
    return fleetRoster(this.#ctx);
  }

  noteOpened(clusterId: string, openedAt: number): Promise<void> {
    return noteOpened(this.#ctx, clusterId, openedAt);
  }

  openedSince(since: number): Promise<ClusterOpened[]> {
    return openedSince(this.#ctx, since);
  }

  takeRemovalSlot(request: SlotRequest): Promise<SlotTaken> {
    return takeRemovalSlot(this.#ctx, request);
  }

  releaseRemovalSlot(owner: string): Promise<boolean> {
    return releaseRemovalSlot(this.#ctx, owner);
  }

  removalSlots(now: number): Promise<RemovalSlot[]> {
    return removalSlots(this.#ctx, now);
  }

  putTimer(input: TimerInput): Promise<StoredTimer> {
    return putTimer(this.#ctx, input);
  }

  dueTimers(now: number): Promise<StoredTimer[]> {
    return dueTimers(this.#ctx, now);
  }

  deleteTimer(name: string, revision?: number): Promise<boolean> {
    return deleteTimer(this.#ctx, name, revision);
  }

  nextTimer(): Promise<StoredTimer | undefined> {
    return nextTimer(this.#ctx);
  }

  async close(): Promise<void> {
    this.#ctx.close();
  }
}
