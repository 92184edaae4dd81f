// Schema of the local store: a base that a new file is created with, then an append-only list of
// migrations on top of it. Never edit the base or a shipped migration: add a migration, so an
// existing file upgrades in place. A file below the base (its version numbered by builds before
// it) is refused, not upgraded; so is one above this build's version.
import type { DatabaseSync } from 'node:sqlite';

/** The version a new file is created at. Versions below it were numbered by builds before the base. */
export const BASE_VERSION = 19;

const BASE_SCHEMA = `
  -- leader_unreachable: the grace window's streak, which outlives the bounded view history. waits:
  -- retries that only waited, which spend no attempt. outbox, steps_done, in_flight: a step's lease,
  -- its commit and its outbox are one conditional write. etcd_cluster_id: the etcd cluster reached.
  CREATE TABLE incidents (
    incident_id        TEXT PRIMARY KEY,
    cluster_id         TEXT NOT NULL,
    target_key         TEXT NOT NULL,
    target             TEXT NOT NULL,
    reason             TEXT NOT NULL,
    state              TEXT NOT NULL CHECK (state IN ('open', 'awaiting-replacement', 'completed', 'blocked', 'closed', 'failed')),
    opened_at          INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    attempt            INTEGER NOT NULL DEFAULT 0,
    immediate_reprobes INTEGER NOT NULL DEFAULT 0,
    member_id          TEXT,
    member_name        TEXT,
    views              TEXT NOT NULL DEFAULT '[]',
    last_decision      TEXT,
    result             TEXT,
    version            INTEGER NOT NULL DEFAULT 1,
    leader_unreachable TEXT,
    waits              INTEGER NOT NULL DEFAULT 0,
    outbox             TEXT NOT NULL DEFAULT '[]',
    steps_done         TEXT NOT NULL DEFAULT '[]',
    in_flight          TEXT,
    etcd_cluster_id    TEXT
  ) STRICT;
  -- The idempotency guarantee lives in the database: one open incident per cluster and target.
  CREATE UNIQUE INDEX incidents_one_open_per_target ON incidents (cluster_id, target_key) WHERE state = 'open';
  CREATE INDEX incidents_by_cluster ON incidents (cluster_id, opened_at);
  -- A report reads its cluster's open incidents and those written lately, not its whole history.
  CREATE INDEX incidents_by_cluster_changed ON incidents (cluster_id, updated_at);
  -- Every step reads its cluster's open incidents: one range of this, not the cluster's history.
  CREATE INDEX incidents_by_cluster_state ON incidents (cluster_id, state, opened_at);
  -- The sweep reads the fleet's incidents awaiting a replacement on every round.
  CREATE INDEX incidents_by_state ON incidents (state, opened_at);

  CREATE TABLE journal (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id    TEXT NOT NULL REFERENCES incidents (incident_id) ON DELETE CASCADE,
    at             INTEGER NOT NULL,
    step           TEXT NOT NULL,
    detail         TEXT,
    is_step_marker INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  CREATE UNIQUE INDEX journal_one_marker_per_step ON journal (incident_id, step) WHERE is_step_marker = 1;
  CREATE INDEX journal_by_incident ON journal (incident_id, seq);

  CREATE TABLE cluster_locks (
    cluster_id TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE dead_letters (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    received_at INTEGER NOT NULL,
    source      TEXT NOT NULL,
    detail_type TEXT NOT NULL,
    payload     TEXT NOT NULL,
    error       TEXT NOT NULL
  ) STRICT;

  CREATE TABLE remediations (
    cluster_id TEXT NOT NULL,
    target_key TEXT NOT NULL,
    at         INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, target_key, at)
  ) STRICT;

  CREATE TABLE timers (
    name     TEXT PRIMARY KEY,
    fire_at  INTEGER NOT NULL,
    payload  TEXT NOT NULL,
    revision INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX timers_by_fire_at ON timers (fire_at);

  -- One process owns the file at a time: its lease, renewed while it runs (state-owner.ts).
  CREATE TABLE state_owner (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    pid        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    proc_start TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    renewed_at INTEGER NOT NULL,
    token      TEXT NOT NULL
  ) STRICT;

  -- Each configured cluster remembers the etcd cluster it is.
  CREATE TABLE cluster_identities (
    cluster_id      TEXT PRIMARY KEY,
    etcd_cluster_id TEXT NOT NULL,
    since           INTEGER NOT NULL
  ) STRICT;

  -- A single-remediator cluster (policy singleRemediator) keeps its removal record here, not in etcd.
  CREATE TABLE cluster_removals (
    cluster_id TEXT PRIMARY KEY,
    records    TEXT NOT NULL
  ) STRICT;

  -- Fleet safety: pauses, each cluster's newest incident opening (the storm guard reads one row a
  -- cluster, never the incidents) and the slots of the removals in flight across the fleet.
  CREATE TABLE fleet_pauses (
    scope   TEXT PRIMARY KEY,
    by_whom TEXT NOT NULL,
    at      INTEGER NOT NULL,
    why     TEXT NOT NULL
  ) STRICT;
  CREATE TABLE fleet_openings (
    cluster_id TEXT PRIMARY KEY,
    opened_at  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX fleet_openings_by_time ON fleet_openings (opened_at);
  CREATE TABLE removal_slots (
    slot       INTEGER PRIMARY KEY,
    owner      TEXT NOT NULL,
    cluster_id TEXT NOT NULL,
    until      INTEGER NOT NULL
  ) STRICT;

  -- When each learner of a cluster was first seen, one clock per learner for the periodic learner
  -- check and every incident of the cluster (etcd does not say when a member was added).
  CREATE TABLE learner_sightings (
    cluster_id TEXT NOT NULL,
    member_id  TEXT NOT NULL,
    first_seen INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, member_id)
  ) STRICT;

  -- One row a write probe rewrites: with nothing else to write (no incident open), it is how a
  -- service learns that a state file which refused writes (a full disk) takes them again.
  CREATE TABLE write_probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    at INTEGER NOT NULL
  ) STRICT;

  -- Leader hygiene's record of each cluster (its last scrapes, samples and moves), JSON written
  -- whole under a version: of a check and a move's deliveries that read one version, one writes.
  CREATE TABLE hygiene_records (
    cluster_id TEXT PRIMARY KEY,
    version    INTEGER NOT NULL,
    record     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;

  -- The fleet this state file serves: the storm guard counts it, whichever command asks.
  CREATE TABLE fleet_roster (
    cluster_id TEXT PRIMARY KEY,
    noted_at   INTEGER NOT NULL
  ) STRICT;
`;

/** Changes after the base, in order: the first is version BASE_VERSION + 1. */
export const migrations: readonly string[] = [
  // 20: maintenance's record of each cluster (core/maintenance/maintenance-record.ts), written as hygiene's is.
  `CREATE TABLE maintenance_records (
    cluster_id TEXT PRIMARY KEY,
    version    INTEGER NOT NULL,
    record     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;`,
];

/** The version a file this build writes holds. */
export const SCHEMA_VERSION = BASE_VERSION + migrations.length;

/** The schema version a file holds, without changing it; undefined when it holds no schema of ours. */
export function schemaVersion(db: DatabaseSync): number | undefined {
  const table = db.prepare(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get();
  if (!table) return undefined;
  return Number(db.prepare('SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations').get()?.version ?? 0);
}

/** A file written by a newer build: its schema is not ours to read or change. */
export class SchemaTooNewError extends Error {
  readonly version: number;
  readonly known: number;
  constructor(version: number, known: number) {
    super(`database schema version ${version} is newer than this build (${known})`);
    this.name = 'SchemaTooNewError';
    this.version = version;
    this.known = known;
  }
}

/** A file written by a build before the base schema: this build has no way up from it. */
export class SchemaTooOldError extends Error {
  readonly version: number;
  constructor(version: number) {
    super(`database schema version ${version} is older than this build's base (${BASE_VERSION})`);
    this.name = 'SchemaTooOldError';
    this.version = version;
  }
}

/** Applies pending migrations under a write lock, so concurrent openers upgrade exactly once. */
export function migrate(db: DatabaseSync, now: number): number {
  // A migration may rebuild a table others reference; with foreign keys on, dropping the old one
  // would cascade. The pragma is a no-op inside a transaction, so it is set before and restored
  // after, and the keys are checked before the commit instead.
  const foreignKeys = Number(db.prepare('PRAGMA foreign_keys').get()?.foreign_keys ?? 0) === 1;
  db.exec('PRAGMA foreign_keys = OFF');
  try {
    return migrateInTransaction(db, now);
  } finally {
    if (foreignKeys) db.exec('PRAGMA foreign_keys = ON');
  }
}

function migrateInTransaction(db: DatabaseSync, now: number): number {
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT');
    const row = db.prepare('SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations').get();
    const current = Number(row?.version ?? 0);
    if (current > SCHEMA_VERSION) throw new SchemaTooNewError(current, SCHEMA_VERSION);
    if (current > 0 && current < BASE_VERSION) throw new SchemaTooOldError(current);
    const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)');
    if (current === 0) {
      db.exec(BASE_SCHEMA);
      record.run(BASE_VERSION, now);
    }
    for (let version = Math.max(current, BASE_VERSION) + 1; version <= SCHEMA_VERSION; version++) {
      db.exec(migrations[version - BASE_VERSION - 1]!);
      record.run(version, now);
    }
    const broken = db.prepare('PRAGMA foreign_key_check').all();
    if (broken.length > 0) throw new Error(`migration left ${broken.length} rows with a broken foreign key: ${JSON.stringify(broken.slice(0, 3))}`);
    db.exec('COMMIT');
    return SCHEMA_VERSION;
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
