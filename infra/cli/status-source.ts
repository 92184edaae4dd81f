// Where status reads: a local state file, opened read-only (it never writes, and works while run
// owns the file), or a deployed stack's table through the functions' own store. What the table
// needs besides the incidents: when each one's next step is due (the local scheduler's timers) and
// what the replacement check said that a person must act on (the journal's replacement-checked lines).
import fs from 'node:fs';
import { isLine, journalSteps } from '../../functions/core/incident/index.ts';
import { openSqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { describeStateError } from '../../functions/adapters/local/state-file.ts';
import type { FleetPauses } from '../../functions/ports/fleet.ts';
import type { Incident, IncidentStore, StoredTimer } from '../../functions/ports/incident-store.ts';
import { requiredFlag, UsageError } from './args.ts';
import { checkOneTarget, openDeployedTable } from './fleet-target.ts';
import type { ClusterHygiene, ClusterMaintenance, ReplacementSaid, StatusEntry } from './status-table.ts';

export type StatusStore = Pick<IncidentStore, 'getIncident' | 'listIncidents' | 'journal' | 'listDeadLetters' | 'fleetPauses' | 'maintenanceRecord'>;

/** The incident an id, or a unique prefix of one, names; `where` names the store in the refusal. */
export async function findIncident(store: StatusStore, where: string, ref: string): Promise<Incident> {
  const exact = await store.getIncident(ref);
  if (exact) return exact;
  const matches = (await store.listIncidents()).filter((i) => i.incidentId.startsWith(ref));
  if (matches.length === 1) return matches[0]!;
  throw new UsageError(
    matches.length === 0 ? `no incident ${JSON.stringify(ref)} in ${where}` : `${JSON.stringify(ref)} matches ${matches.length} incidents; give more of the id`,
  );
}

export interface StatusSource {
  store: StatusStore;
  /** "state file F" or "table T". */
  where: string;
  /** Every incident, with what the table says of it, and the pauses. */
  read(): Promise<StatusSnapshot>;
  /** A read's failure as the caller should see it: for a state file, its path and the problem in one line. */
  described(error: unknown): unknown;
  close(): Promise<void>;
}

export interface StatusSnapshot {
  incidents: Incident[];
  entries: StatusEntry[];
  pauses: FleetPauses;
  /** The clusters with a leader-hygiene record, by id. */
  hygiene: ClusterHygiene[];
  /** The clusters with a maintenance record, by id. */
  maintenance: ClusterMaintenance[];
}

/** --state FILE (read-only) or --table NAME [--region R]. */
export async function openStatusSource(values: { state?: string | undefined; table?: string | undefined; region?: string | undefined }): Promise<StatusSource> {
  if (values.table === undefined && values.state === undefined) requiredFlag('state', values.state, 'state.sqlite');
  if (checkOneTarget(values) === 'table') {
    const table = await openDeployedTable(values.table!, values.region);
    // The functions schedule with EventBridge Scheduler, which this table does not hold: the next step is the last retry's.
    const missing = (error: unknown) =>
      error instanceof Error && error.name === 'ResourceNotFoundException'
        ? new UsageError(`--table: no table ${values.table} in this account and region (${error.message})`)
        : error;
    // The table's records are read for its registered clusters: a record is keyed by cluster, with no list of its own.
    const each = async <T>(read: (clusterId: string) => Promise<{ record: T } | undefined>) => {
      const stored = await Promise.all((await table.registeredClusterIds()).map(async (clusterId) => ({ clusterId, stored: await read(clusterId) })));
      return stored.flatMap(({ clusterId, stored: s }) => (s ? [{ clusterId, record: s.record }] : []));
    };
    const reads: SnapshotReads = {
      timers: async () => [],
      hygiene: () => each((id) => table.records.hygieneRecord(id)),
      maintenance: () => each((id) => table.records.maintenanceRecord(id)),
    };
    return source(table.records, table.where, reads, () => table.close(), missing);
  }
  const statePath = values.state!;
  if (!fs.existsSync(statePath)) throw new UsageError(`--state: no state file at ${statePath}`);
  const store = openSqliteStore({ path: statePath, readOnly: true });
  // A file damaged past its first page fails only when read: still the path and the problem in one line.
  const reads: SnapshotReads = {
    timers: () => store.dueTimers(Number.MAX_SAFE_INTEGER),
    hygiene: async () => (await store.hygieneRecords()).map(({ clusterId, record }) => ({ clusterId, record })),
    maintenance: async () => (await store.maintenanceRecords()).map(({ clusterId, record }) => ({ clusterId, record })),
  };
  return source(
    store,
    `state file ${statePath}`,
    reads,
    () => store.close(),
    (error) => describeStateError(statePath, error),
  );
}

/** What a snapshot reads besides the store's incidents and pauses, as each backend keeps it. */
interface SnapshotReads {
  timers(): Promise<StoredTimer[]>;
  hygiene(): Promise<ClusterHygiene[]>;
  maintenance(): Promise<ClusterMaintenance[]>;
}

function source(store: StatusStore, where: string, reads: SnapshotReads, close: () => Promise<void>, described: (error: unknown) => unknown): StatusSource {
  return { store, where, close, described, read: () => readSnapshot(store, reads) };
}

/** The incident a timer's event is for: the local scheduler keeps the event it will put on the bus. */
const incidentOfTimer = (timer: StoredTimer): string | undefined => {
  const detail = (timer.payload as { detail?: { incidentId?: unknown } } | null)?.detail;
  return typeof detail?.incidentId === 'string' ? detail.incidentId : undefined;
};

async function readSnapshot(store: StatusStore, reads: SnapshotReads): Promise<StatusSnapshot> {
  const [incidents, pauses, pending, hygiene, maintenance] = await Promise.all([
    store.listIncidents(),
    store.fleetPauses(),
    reads.timers(),
    reads.hygiene(),
    reads.maintenance(),
  ]);
  const dueAt = new Map<string, number>();
  for (const timer of pending) {
    const id = incidentOfTimer(timer);
    if (id !== undefined) dueAt.set(id, Math.min(dueAt.get(id) ?? Infinity, timer.fireAt));
  }
  const entries = await Promise.all(
    incidents.map(async (incident): Promise<StatusEntry> => {
      const said = incident.state === 'awaiting-replacement' ? await replacementSaid(store, incident.incidentId) : undefined;
      const next = dueAt.get(incident.incidentId);
      return { incident, ...(next === undefined ? {} : { nextDueAt: next }), ...(said ? { replacementSaid: said } : {}) };
    }),
  );
  return { incidents, entries, pauses, hygiene, maintenance };
}

/**
 * The replacement's last word that a person must act on: its checks ended; else what holds the
 * control plane's scale-up while it does (watch's last held or released line), which says why it is
 * overdue; else overdue.
 */
async function replacementSaid(store: StatusStore, incidentId: string): Promise<ReplacementSaid | undefined> {
  const said = (await store.journal(incidentId)).flatMap((e) => (isLine(e, journalSteps.replacementChecked) ? [e.detail.reason] : []));
  if (said.includes('REPLACEMENT_CHECKS_ENDED')) return 'REPLACEMENT_CHECKS_ENDED';
  if (said.findLast((reason) => reason === 'REPLACEMENT_HELD' || reason === 'REPLACEMENT_RELEASED') === 'REPLACEMENT_HELD') return 'REPLACEMENT_HELD';
  return said.includes('REPLACEMENT_OVERDUE') ? 'REPLACEMENT_OVERDUE' : undefined;
}
