// The fleet's records on SQLite: pauses (one row a scope), each cluster's newest incident opening,
// and the removal slots. A slot is taken in one IMMEDIATE transaction, so racing processes on one
// file never hold more than the cap.
import type { FleetMark, FleetPauses } from '../../core/fleet/index.ts';
import type { ClusterOpened, RemovalSlot, SlotRequest, SlotTaken } from '../../ports/fleet.ts';
import { int, text, type Row, type SqliteContext } from './sqlite-context.ts';

const FLEET_SCOPE = 'fleet';
const STORM_ENDED_SCOPE = 'storm-ended';
const clusterScope = (clusterId: string): string => `cluster:${clusterId}`;

const markOf = (row: Row): FleetMark => ({ by: text(row, 'by_whom'), at: int(row, 'at'), why: text(row, 'why') });

export async function fleetPauses(ctx: SqliteContext): Promise<FleetPauses> {
  const pauses: FleetPauses = {};
  const clusters: Record<string, FleetMark> = {};
  for (const row of ctx.rows('SELECT scope, by_whom, at, why FROM fleet_pauses', {})) {
    const scope = text(row, 'scope');
    if (scope === FLEET_SCOPE) pauses.fleet = markOf(row);
    else if (scope === STORM_ENDED_SCOPE) pauses.stormEnded = markOf(row);
    else if (scope.startsWith('cluster:')) clusters[scope.slice('cluster:'.length)] = markOf(row);
  }
  if (Object.keys(clusters).length > 0) pauses.clusters = clusters;
  return pauses;
}

const putMark = (ctx: SqliteContext, scope: string, mark: FleetMark) =>
  ctx.run(
    `INSERT INTO fleet_pauses (scope, by_whom, at, why) VALUES ($scope, $by, $at, $why)
     ON CONFLICT (scope) DO UPDATE SET by_whom = excluded.by_whom, at = excluded.at, why = excluded.why`,
    { scope, ...mark },
  );

export async function setPause(ctx: SqliteContext, clusterId: string | undefined, mark: FleetMark | null): Promise<boolean> {
  const scope = clusterId === undefined ? FLEET_SCOPE : clusterScope(clusterId);
  if (mark === null) return ctx.run('DELETE FROM fleet_pauses WHERE scope = $scope', { scope }).changes === 1;
  return putMark(ctx, scope, mark).changes === 1;
}

export async function endStorm(ctx: SqliteContext, mark: FleetMark): Promise<void> {
  putMark(ctx, STORM_ENDED_SCOPE, mark);
}

export async function noteOpened(ctx: SqliteContext, clusterId: string, openedAt: number): Promise<void> {
  ctx.run(
    `INSERT INTO fleet_openings (cluster_id, opened_at) VALUES ($clusterId, $openedAt)
     ON CONFLICT (cluster_id) DO UPDATE SET opened_at = excluded.opened_at WHERE excluded.opened_at > fleet_openings.opened_at`,
    { clusterId, openedAt },
  );
}

export async function openedSince(ctx: SqliteContext, since: number): Promise<ClusterOpened[]> {
  return ctx
    .rows('SELECT cluster_id, opened_at FROM fleet_openings WHERE opened_at > $since ORDER BY opened_at DESC', { since })
    .map((row) => ({ clusterId: text(row, 'cluster_id'), openedAt: int(row, 'opened_at') }));
}

const slotOf = (row: Row): RemovalSlot => ({ slot: int(row, 'slot'), owner: text(row, 'owner'), clusterId: text(row, 'cluster_id'), until: int(row, 'until') });

export async function takeRemovalSlot(ctx: SqliteContext, request: SlotRequest): Promise<SlotTaken> {
  const { owner, clusterId, max, leaseMs, now } = request;
  if (!(leaseMs > 0) || !(max > 0)) throw new RangeError(`a slot needs a positive lease and cap, got ${leaseMs} ms and ${max}`);
  return ctx.transaction(() => {
    const rows = ctx.rows('SELECT slot, owner, cluster_id, until FROM removal_slots WHERE slot < $max ORDER BY slot', { max }).map(slotOf);
    const own = rows.find((r) => r.owner === owner);
    const held = new Set(rows.filter((r) => r.until > now).map((r) => r.slot));
    const slot = own?.slot ?? Array.from({ length: max }, (_, i) => i).find((i) => !held.has(i));
    if (slot === undefined) return { taken: false, holders: rows.filter((r) => r.until > now) };
    ctx.run(
      `INSERT INTO removal_slots (slot, owner, cluster_id, until) VALUES ($slot, $owner, $clusterId, $until)
       ON CONFLICT (slot) DO UPDATE SET owner = excluded.owner, cluster_id = excluded.cluster_id, until = excluded.until`,
      { slot, owner, clusterId, until: now + leaseMs },
    );
    return { taken: true, slot };
  });
}

export async function releaseRemovalSlot(ctx: SqliteContext, owner: string): Promise<boolean> {
  return ctx.run('DELETE FROM removal_slots WHERE owner = $owner', { owner }).changes > 0;
}

export async function removalSlots(ctx: SqliteContext, now: number): Promise<RemovalSlot[]> {
  return ctx.rows('SELECT slot, owner, cluster_id, until FROM removal_slots WHERE until > $now ORDER BY slot', { now }).map(slotOf);
}

export async function noteFleet(ctx: SqliteContext, clusterIds: readonly string[], options: { replace: boolean }, now: number): Promise<void> {
  ctx.transaction(() => {
    if (options.replace) ctx.run('DELETE FROM fleet_roster', {});
    for (const clusterId of clusterIds)
      ctx.run('INSERT INTO fleet_roster (cluster_id, noted_at) VALUES ($clusterId, $now) ON CONFLICT (cluster_id) DO NOTHING', { clusterId, now });
  });
}

export async function fleetRoster(ctx: SqliteContext): Promise<string[]> {
  return ctx.rows('SELECT cluster_id FROM fleet_roster ORDER BY cluster_id', {}).map((row) => text(row, 'cluster_id'));
}
