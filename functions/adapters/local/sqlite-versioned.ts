// A record per cluster written whole under a version (leader hygiene's, maintenance's): one row,
// written by one statement, the first write an INSERT that a row already there refuses.
import { int, text, type SqliteContext } from './sqlite-context.ts';

export type VersionedTable = 'hygiene_records' | 'maintenance_records';

export interface VersionedText {
  text: string;
  version: number;
}

export function versionedText(ctx: SqliteContext, table: VersionedTable, clusterId: string): VersionedText | undefined {
  const row = ctx.row(`SELECT version, record FROM ${table} WHERE cluster_id = $clusterId`, { clusterId });
  return row && { text: text(row, 'record'), version: int(row, 'version') };
}

/** Every cluster's, by cluster id. */
export function versionedTexts(ctx: SqliteContext, table: VersionedTable): (VersionedText & { clusterId: string })[] {
  return ctx
    .rows(`SELECT cluster_id, version, record FROM ${table} ORDER BY cluster_id`, {})
    .map((row) => ({ clusterId: text(row, 'cluster_id'), text: text(row, 'record'), version: int(row, 'version') }));
}

/** Writes `version` when the stored one is `expectVersion` (0: none yet); false when another write came first. */
export function saveVersionedText(
  ctx: SqliteContext,
  table: VersionedTable,
  clusterId: string,
  record: string,
  version: number,
  expectVersion: number,
): boolean {
  const row = { clusterId, version, record, now: Date.now() };
  const { changes } =
    expectVersion === 0
      ? ctx.run(
          `INSERT INTO ${table} (cluster_id, version, record, updated_at) VALUES ($clusterId, $version, $record, $now) ON CONFLICT (cluster_id) DO NOTHING`,
          row,
        )
      : ctx.run(`UPDATE ${table} SET version = $version, record = $record, updated_at = $now WHERE cluster_id = $clusterId AND version = $expectVersion`, {
          ...row,
          expectVersion,
        });
  return Number(changes) === 1;
}
