// The journal on SQLite: lines and step markers in one table, in the order of their sequence
// number. The foreign key proves the incident exists; a unique index on (incident, step) over
// the markers makes the first marker of a step win.
import { IncidentNotFoundError, type JournalEntry, type JournalInput, type MarkerStep } from '../../ports/incident-store.ts';
import { int, sqliteErrcode, SQLITE_CONSTRAINT_FOREIGNKEY, text, toJson, type SqliteContext } from './sqlite-context.ts';

export async function appendJournal(ctx: SqliteContext, incidentId: string, entry: JournalInput): Promise<void> {
  insertJournal(ctx, incidentId, entry, false);
}

export async function journal(ctx: SqliteContext, incidentId: string): Promise<JournalEntry[]> {
  return ctx.rows('SELECT at, step, detail, is_step_marker FROM journal WHERE incident_id = $incidentId ORDER BY seq', { incidentId }).map(
    // Each line's detail is the fields its step writes (journal.ts), as appendJournal stored them.
    (row) =>
      ({
        at: int(row, 'at'),
        step: text(row, 'step'),
        detail: JSON.parse(text(row, 'detail')) as unknown,
        isStepMarker: int(row, 'is_step_marker') === 1,
      }) as JournalEntry,
  );
}

/** True only for the call whose insert wrote the marker. */
export async function markStep(ctx: SqliteContext, incidentId: string, entry: JournalInput & { step: MarkerStep }): Promise<boolean> {
  return insertJournal(ctx, incidentId, entry, true);
}

export async function stepDone(ctx: SqliteContext, incidentId: string, step: MarkerStep): Promise<boolean> {
  return !!ctx.row('SELECT 1 AS done FROM journal WHERE incident_id = $incidentId AND step = $step AND is_step_marker = 1', { incidentId, step });
}

/** Writes one line or marker; IncidentNotFoundError when there is no incident to write to. */
function insertJournal(ctx: SqliteContext, incidentId: string, entry: JournalInput, isStepMarker: boolean): boolean {
  try {
    const { changes } = ctx.run(
      `INSERT INTO journal (incident_id, at, step, detail, is_step_marker)
       VALUES ($incidentId, $at, $step, $detail, $isStepMarker)
       ON CONFLICT (incident_id, step) WHERE is_step_marker = 1 DO NOTHING`,
      { incidentId, at: entry.at, step: entry.step, detail: toJson(entry.detail), isStepMarker: isStepMarker ? 1 : 0 },
    );
    return changes === 1;
  } catch (error) {
    if (sqliteErrcode(error) === SQLITE_CONSTRAINT_FOREIGNKEY) throw new IncidentNotFoundError(incidentId);
    throw error;
  }
}
