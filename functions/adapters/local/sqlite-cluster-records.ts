// Leader hygiene's and maintenance's records of each cluster on SQLite, each one row written whole
// under its version (sqlite-versioned.ts).
import { hygieneRecordFromText, hygieneRecordText, type HygieneRecord } from '../../core/hygiene/index.ts';
import { maintenanceRecordFromText, maintenanceRecordText, type MaintenanceRecord } from '../../core/maintenance/index.ts';
import { nextRecordVersion } from '../../core/common/index.ts';
import { HygieneConflictError, MaintenanceConflictError, type StoredHygiene, type StoredMaintenance } from '../../ports/incident-store.ts';
import type { SqliteContext } from './sqlite-context.ts';
import { saveVersionedText, versionedText, versionedTexts } from './sqlite-versioned.ts';

export async function hygieneRecord(ctx: SqliteContext, clusterId: string): Promise<StoredHygiene | undefined> {
  const stored = versionedText(ctx, 'hygiene_records', clusterId);
  return stored && { record: hygieneRecordFromText(stored.text, `hygiene record of ${clusterId}`), version: stored.version };
}

/** Every cluster's record, by cluster id: what status shows of leader hygiene. */
export async function hygieneRecords(ctx: SqliteContext): Promise<(StoredHygiene & { clusterId: string })[]> {
  return versionedTexts(ctx, 'hygiene_records').map(({ clusterId, text, version }) => ({
    clusterId,
    record: hygieneRecordFromText(text, `hygiene record of ${clusterId}`),
    version,
  }));
}

export async function saveHygieneRecord(ctx: SqliteContext, clusterId: string, record: HygieneRecord, expectVersion: number): Promise<number> {
  const version = nextRecordVersion(expectVersion);
  if (!saveVersionedText(ctx, 'hygiene_records', clusterId, hygieneRecordText(record), version, expectVersion))
    throw new HygieneConflictError(clusterId, expectVersion);
  return version;
}

export async function maintenanceRecord(ctx: SqliteContext, clusterId: string): Promise<StoredMaintenance | undefined> {
  const stored = versionedText(ctx, 'maintenance_records', clusterId);
  return stored && { record: maintenanceRecordFromText(stored.text, `maintenance record of ${clusterId}`), version: stored.version };
}

/** Every cluster's record, by cluster id: what status shows of maintenance. */
export async function maintenanceRecords(ctx: SqliteContext): Promise<(StoredMaintenance & { clusterId: string })[]> {
  return versionedTexts(ctx, 'maintenance_records').map(({ clusterId, text, version }) => ({
    clusterId,
    record: maintenanceRecordFromText(text, `maintenance record of ${clusterId}`),
    version,
  }));
}

export async function saveMaintenanceRecord(ctx: SqliteContext, clusterId: string, record: MaintenanceRecord, expectVersion: number): Promise<number> {
  const version = nextRecordVersion(expectVersion);
  if (!saveVersionedText(ctx, 'maintenance_records', clusterId, maintenanceRecordText(record), version, expectVersion))
    throw new MaintenanceConflictError(clusterId, expectVersion);
  return version;
}
