// Incidents on SQLite: open or join, read, list, update and close. Opening is one IMMEDIATE
// transaction; an update is one UPDATE on the version read, a close one on the incident still open.
import { randomUUID } from 'node:crypto';
import type { Decision } from '../../core/common/index.ts';
import { type CarriedStreak, type ClusterView, keptViews } from '../../core/view/index.ts';
import { endsFrom } from '../../core/incident/index.ts';
import {
  IncidentNotFoundError,
  VersionConflictError,
  type CloseIncidentInput,
  type InFlight,
  type Incident,
  type IncidentFilter,
  type IncidentPatch,
  type IncidentState,
  type OpenIncidentInput,
  type OutboxEntry,
} from '../../ports/incident-store.ts';
import { int, optText, text, toJson, type Row, type SqliteContext } from './sqlite-context.ts';

export async function openOrJoin(ctx: SqliteContext, input: OpenIncidentInput): Promise<{ incident: Incident; joined: boolean }> {
  // IMMEDIATE takes the write lock before the read, so no other connection can open in between;
  // the partial unique index is the backstop if anyone bypasses this path.
  return ctx.transaction(() => {
    if (input.incidentId !== undefined) {
      const same = readIncident(ctx, input.incidentId);
      if (same) {
        if (same.clusterId !== input.clusterId || same.targetKey !== input.targetKey) {
          throw new Error(`incident ${input.incidentId} belongs to ${same.clusterId}/${same.targetKey}`);
        }
        return { incident: same, joined: true };
      }
    }
    const open = ctx.row(`SELECT * FROM incidents WHERE cluster_id = $clusterId AND target_key = $targetKey AND state = 'open'`, {
      clusterId: input.clusterId,
      targetKey: input.targetKey,
    });
    if (open) return { incident: toIncident(open), joined: true };
    const incidentId = input.incidentId ?? randomUUID();
    ctx.run(
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
    return { incident: readIncident(ctx, incidentId)!, joined: false };
  });
}

export async function getIncident(ctx: SqliteContext, incidentId: string): Promise<Incident | undefined> {
  return readIncident(ctx, incidentId);
}

export async function listIncidents(ctx: SqliteContext, filter: IncidentFilter): Promise<Incident[]> {
  if ('openOrChangedSince' in filter) return recentIncidents(ctx, filter);
  const { sql, params } = listIncidentsQuery(filter);
  return ctx.rows(sql, params).map(toIncident);
}

/**
 * Only the conditions asked for: `$x IS NULL OR column = $x` would read the whole table whatever
 * was asked, where these read one index range (a cluster's open incidents, the fleet's open ones).
 */
export function listIncidentsQuery(filter: { clusterId?: string; state?: IncidentState }): { sql: string; params: Record<string, string> } {
  const conditions = [filter.clusterId === undefined ? '' : 'cluster_id = $clusterId', filter.state === undefined ? '' : 'state = $state'].filter(Boolean);
  const params = { ...(filter.clusterId === undefined ? {} : { clusterId: filter.clusterId }), ...(filter.state === undefined ? {} : { state: filter.state }) };
  return { sql: `SELECT * FROM incidents${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''} ORDER BY opened_at, incident_id`, params };
}

/**
 * A cluster's open incidents (the one-open-per-target index) and those written since (the
 * incidents_by_cluster_changed index): two index ranges, never the cluster's whole history.
 */
export const RECENT_INCIDENTS_SQL = `SELECT * FROM incidents WHERE cluster_id = $clusterId AND state = 'open' AND ($state IS NULL OR state = $state)
  UNION ALL
  SELECT * FROM incidents WHERE cluster_id = $clusterId AND updated_at >= $since AND state != 'open' AND ($state IS NULL OR state = $state)
  ORDER BY opened_at, incident_id`;

function recentIncidents(ctx: SqliteContext, filter: Extract<IncidentFilter, { openOrChangedSince: number }>): Incident[] {
  return ctx.rows(RECENT_INCIDENTS_SQL, { clusterId: filter.clusterId, since: filter.openOrChangedSince, state: filter.state ?? null }).map(toIncident);
}

export async function updateIncident(
  ctx: SqliteContext,
  incidentId: string,
  patch: IncidentPatch,
  options: { expectVersion: number; now: number },
): Promise<Incident> {
  const current = readIncident(ctx, incidentId);
  if (!current) throw new IncidentNotFoundError(incidentId);
  if (current.version !== options.expectVersion) {
    throw new VersionConflictError(incidentId, options.expectVersion, current.version);
  }
  // Closing is one way: a closed incident is never closed again, whatever its version (but for
  // an incident awaiting its replacement, which completes: core endsFrom).
  if (patch.state !== undefined && !endsFrom(patch.state).includes(current.state)) {
    throw new VersionConflictError(incidentId, options.expectVersion, current.version);
  }
  const next = { ...current, ...definedOnly(patch) };
  const { changes } = ctx.run(
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
      views: JSON.stringify(keptViews(next.views)),
      lastDecision: toJson(next.lastDecision),
      result: toJson(next.result),
      leaderUnreachable: toJson(next.leaderUnreachable ?? undefined),
    },
  );
  const stored = readIncident(ctx, incidentId);
  if (!stored) throw new IncidentNotFoundError(incidentId);
  if (changes === 0) throw new VersionConflictError(incidentId, options.expectVersion, stored.version);
  return stored;
}

export async function closeIncident(ctx: SqliteContext, incidentId: string, input: CloseIncidentInput): Promise<Incident> {
  const { changes } = ctx.run(
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
  const stored = readIncident(ctx, incidentId);
  if (!stored) throw new IncidentNotFoundError(incidentId);
  if (changes === 0 && stored.state === 'open') {
    throw new VersionConflictError(incidentId, input.expectVersion ?? stored.version, stored.version);
  }
  return stored;
}

/** The incident as stored now, read in step with the caller (inside its transaction, if any). */
function readIncident(ctx: SqliteContext, incidentId: string): Incident | undefined {
  const row = ctx.row('SELECT * FROM incidents WHERE incident_id = $incidentId', { incidentId });
  return row && toIncident(row);
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

/** A patch key set to undefined means "leave as is", so patches can be built conditionally. */
function definedOnly(patch: IncidentPatch): IncidentPatch {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
}
