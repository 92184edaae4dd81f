// The store's small records on SQLite: cluster identities, the cluster lock (a lease), the
// single-remediator removal records, dead letters and the remediation ledger. Each is one statement.
import { randomUUID } from 'node:crypto';
import { remediationHistoryFrom, type RemediationHistory } from '../../core/removal/index.ts';
import type { RemovalRecord } from '../../core/replacement/index.ts';
import type { DeadLetter, DeadLetterInput } from '../../ports/incident-store.ts';
import { int, text, type SqliteContext } from './sqlite-context.ts';

export async function knownIdentity(ctx: SqliteContext, clusterId: string): Promise<{ etcdClusterId: string; since: number } | undefined> {
  const row = ctx.row('SELECT etcd_cluster_id, since FROM cluster_identities WHERE cluster_id = $clusterId', { clusterId });
  return row && { etcdClusterId: text(row, 'etcd_cluster_id'), since: int(row, 'since') };
}

/** The first identity remembered for a cluster stays; the one stored is returned. */
export async function rememberIdentity(
  ctx: SqliteContext,
  clusterId: string,
  etcdClusterId: string,
  at: number,
): Promise<{ etcdClusterId: string; since: number }> {
  ctx.run('INSERT INTO cluster_identities (cluster_id, etcd_cluster_id, since) VALUES ($clusterId, $etcdClusterId, $at) ON CONFLICT DO NOTHING', {
    clusterId,
    etcdClusterId,
    at,
  });
  return (await knownIdentity(ctx, clusterId))!;
}

export async function acquireLock(ctx: SqliteContext, clusterId: string, owner: string, leaseMs: number, now: number): Promise<boolean> {
  if (!(leaseMs > 0)) throw new RangeError(`lease must be positive, got ${leaseMs}`);
  // One upsert: take a free lock, renew our own, or steal an expired one; anything else changes nothing.
  const { changes } = ctx.run(
    `INSERT INTO cluster_locks (cluster_id, owner, expires_at) VALUES ($clusterId, $owner, $expiresAt)
     ON CONFLICT (cluster_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
     WHERE cluster_locks.owner = excluded.owner OR cluster_locks.expires_at <= $now`,
    { clusterId, owner, expiresAt: now + leaseMs, now },
  );
  return changes === 1;
}

export async function releaseLock(ctx: SqliteContext, clusterId: string, owner: string): Promise<boolean> {
  const { changes } = ctx.run('DELETE FROM cluster_locks WHERE cluster_id = $clusterId AND owner = $owner', {
    clusterId,
    owner,
  });
  return changes === 1;
}

export async function removalRecords(ctx: SqliteContext, clusterId: string): Promise<RemovalRecord[]> {
  const row = ctx.row('SELECT records FROM cluster_removals WHERE cluster_id = $clusterId', { clusterId });
  return row ? (JSON.parse(text(row, 'records')) as RemovalRecord[]) : [];
}

export async function saveRemovalRecords(ctx: SqliteContext, clusterId: string, records: RemovalRecord[]): Promise<void> {
  ctx.run(
    'INSERT INTO cluster_removals (cluster_id, records) VALUES ($clusterId, $records) ON CONFLICT (cluster_id) DO UPDATE SET records = excluded.records',
    {
      clusterId,
      records: JSON.stringify(records),
    },
  );
}

export async function learnerSightings(ctx: SqliteContext, clusterId: string): Promise<Record<string, number>> {
  const rows = ctx.rows('SELECT member_id, first_seen FROM learner_sightings WHERE cluster_id = $clusterId', { clusterId });
  return Object.fromEntries(rows.map((row) => [text(row, 'member_id'), int(row, 'first_seen')]));
}

/** One IMMEDIATE transaction: the members not seen drop out, and each one seen keeps its earliest time. */
export async function saveLearnerSightings(ctx: SqliteContext, clusterId: string, seen: Readonly<Record<string, number>>): Promise<Record<string, number>> {
  ctx.transaction(() => {
    ctx.run('DELETE FROM learner_sightings WHERE cluster_id = $clusterId AND member_id NOT IN (SELECT value FROM json_each($members))', {
      clusterId,
      members: JSON.stringify(Object.keys(seen)),
    });
    for (const [memberId, firstSeen] of Object.entries(seen)) {
      ctx.run(
        `INSERT INTO learner_sightings (cluster_id, member_id, first_seen) VALUES ($clusterId, $memberId, $firstSeen)
         ON CONFLICT (cluster_id, member_id) DO UPDATE SET first_seen = MIN(first_seen, excluded.first_seen)`,
        { clusterId, memberId, firstSeen },
      );
    }
  });
  return learnerSightings(ctx, clusterId);
}

export async function putDeadLetter(ctx: SqliteContext, input: DeadLetterInput): Promise<DeadLetter> {
  const letter: DeadLetter = { id: randomUUID(), ...input };
  ctx.run(
    `INSERT INTO dead_letters (id, received_at, source, detail_type, payload, error)
     VALUES ($id, $receivedAt, $source, $detailType, $payload, $error)`,
    { ...letter },
  );
  return letter;
}

export async function listDeadLetters(ctx: SqliteContext): Promise<DeadLetter[]> {
  return ctx.rows('SELECT * FROM dead_letters ORDER BY seq', {}).map((row) => ({
    id: text(row, 'id'),
    receivedAt: int(row, 'received_at'),
    source: text(row, 'source'),
    detailType: text(row, 'detail_type'),
    payload: text(row, 'payload'),
    error: text(row, 'error'),
  }));
}

export async function recordRemediation(ctx: SqliteContext, clusterId: string, targetKey: string, at: number): Promise<void> {
  ctx.run(
    `INSERT INTO remediations (cluster_id, target_key, at) VALUES ($clusterId, $targetKey, $at)
     ON CONFLICT DO NOTHING`,
    { clusterId, targetKey, at },
  );
}

export async function remediationHistory(
  ctx: SqliteContext,
  clusterId: string,
  targetKey: string,
  options: { minHealthyPeriodMs: number; now: number },
): Promise<RemediationHistory> {
  const times = ctx
    .rows('SELECT at FROM remediations WHERE cluster_id = $clusterId AND target_key = $targetKey ORDER BY at', { clusterId, targetKey })
    .map((row) => int(row, 'at'));
  return remediationHistoryFrom(times, options);
}
