// Leader hygiene's record of each cluster on SQLite: one row, written whole under its version by
// one statement, the first write an INSERT that a row already there refuses.
import { hygieneRecordFromText, hygieneRecordText, nextHygieneVersion, type HygieneRecord } from '../../core/hygiene/index.ts';
import { HygieneConflictError, type StoredHygiene } from '../../ports/incident-store.ts';
import { int, text, type SqliteContext } from './sqlite-context.ts';

export async function hygieneRecord(ctx: SqliteContext, clusterId: string): Promise<StoredHygiene | undefined> {
  const row = ctx.row('SELECT version, record FROM hygiene_records WHERE cluster_id = $clusterId', { clusterId });
  return row && { record: hygieneRecordFromText(text(row, 'record'), `hygiene record of ${clusterId}`), version: int(row, 'version') };
}

/** Every cluster's record, by cluster id: what status shows of leader hygiene. */
export async function hygieneRecords(ctx: SqliteContext): Promise<(StoredHygiene & { clusterId: string })[]> {
  return ctx.rows('SELECT cluster_id, version, record FROM hygiene_records ORDER BY cluster_id', {}).map((row) => {
    const clusterId = text(row, 'cluster_id');
    return { clusterId, record: hygieneRecordFromText(text(row, 'record'), `hygiene record of ${clusterId}`), version: int(row, 'version') };
  });
}

export async function saveHygieneRecord(ctx: SqliteContext, clusterId: string, record: HygieneRecord, expectVersion: number): Promise<number> {
  const version = nextHygieneVersion(expectVersion);
  const row = { clusterId, version, record: hygieneRecordText(record), now: Date.now() };
  const { changes } =
    expectVersion === 0
      ? ctx.run(
          'INSERT INTO hygiene_records (cluster_id, version, record, updated_at) VALUES ($clusterId, $version, $record, $now) ON CONFLICT (cluster_id) DO NOTHING',
          row,
        )
      : ctx.run(
          'UPDATE hygiene_records SET version = $version, record = $record, updated_at = $now WHERE cluster_id = $clusterId AND version = $expectVersion',
          { ...row, expectVersion },
        );
  if (Number(changes) !== 1) throw new HygieneConflictError(clusterId, expectVersion);
  return version;
}
