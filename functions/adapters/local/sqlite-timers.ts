// Timers on SQLite: one row per name, its revision bumped on every put, so a delete can name the
// revision it saw and leave a newer put alone.
import type { StoredTimer, TimerInput } from '../../ports/incident-store.ts';
import { int, text, type Row, type SqliteContext } from './sqlite-context.ts';

export async function putTimer(ctx: SqliteContext, input: TimerInput): Promise<StoredTimer> {
  // In a transaction of its own: on its own, a statement with RETURNING commits when it is reset,
  // and node:sqlite drops an error there, so a full disk would lose the timer without a word.
  const row = ctx.transaction(() =>
    ctx.writeRow(
      `INSERT INTO timers (name, fire_at, payload, revision) VALUES ($name, $fireAt, $payload, 1)
       ON CONFLICT (name) DO UPDATE SET fire_at = excluded.fire_at, payload = excluded.payload,
         revision = timers.revision + 1
       RETURNING *`,
      { name: input.name, fireAt: input.fireAt, payload: JSON.stringify(input.payload ?? null) },
    ),
  );
  return toTimer(row!);
}

export async function dueTimers(ctx: SqliteContext, now: number): Promise<StoredTimer[]> {
  return ctx.rows('SELECT * FROM timers WHERE fire_at <= $now ORDER BY fire_at, name', { now }).map(toTimer);
}

export async function deleteTimer(ctx: SqliteContext, name: string, revision?: number): Promise<boolean> {
  const { changes } = ctx.run('DELETE FROM timers WHERE name = $name AND ($revision IS NULL OR revision = $revision)', { name, revision: revision ?? null });
  return changes === 1;
}

export async function nextTimer(ctx: SqliteContext): Promise<StoredTimer | undefined> {
  const row = ctx.row('SELECT * FROM timers ORDER BY fire_at, name LIMIT 1', {});
  return row && toTimer(row);
}

function toTimer(row: Row): StoredTimer {
  return {
    name: text(row, 'name'),
    fireAt: int(row, 'fire_at'),
    payload: JSON.parse(text(row, 'payload')),
    revision: int(row, 'revision'),
  };
}
