// When a maintenance run stalls a member, as a removal's look reads it from the record: the
// defragmentation claimed now (that member counts as down), and each one journaled (a look that
// ran meanwhile saw the member down for that alone).
import { describe, expect, it } from 'vitest';
import {
  claimReleased,
  claimStep,
  defragmentationInFlight,
  defragmentationSpans,
  emptyMaintenanceRecord,
  stalledByDefragmentation,
  stepEnded,
} from '../../../../functions/core/maintenance/index.ts';

const start = { runId: 'run-1', reason: 'MAINTENANCE_NOSPACE' as const, askedBy: 'incident:1' };
const T = 1_000_000;

describe('a defragmentation under way', () => {
  const claimed = claimStep(emptyMaintenanceRecord(), start, 'defragment:m2', 'owner-a', T, T + 60_000);
  if (!claimed.claimed) throw new Error('the first claim must hold');

  it('is the claimed step until its claim lapses; a claimed move or compaction stalls no member', () => {
    expect(defragmentationInFlight(claimed.record, T + 1)).toEqual({ member: 'm2', runId: 'run-1', until: T + 60_000 });
    expect(defragmentationInFlight(claimed.record, T + 60_000)).toBeUndefined();
    expect(defragmentationInFlight(claimReleased(claimed.record), T + 1)).toBeUndefined();
    const move = claimStep(emptyMaintenanceRecord(), start, 'move-leader:m1', 'owner-a', T, T + 60_000);
    expect(move.claimed && defragmentationInFlight(move.record, T + 1)).toBeUndefined();
  });

  it('each journaled defragmentation and the claim are spans a look overlaps, or not', () => {
    const after = stepEnded(claimed.record, { key: 'defragment:m2', at: T, tookMs: 800, outcome: 'done', message: 'ok' }, 'm2');
    const next = claimStep(after, start, 'defragment:m3', 'owner-b', T + 1_000, T + 61_000);
    if (!next.claimed) throw new Error('the next claim must hold');
    const spans = defragmentationSpans(next.record, T + 1_500);
    expect(spans).toEqual([
      { member: 'm2', from: T, until: T + 800 },
      { member: 'm3', from: T + 800, until: T + 61_000 },
    ]);
    // A look from T + 500 taking up to 1 s overlapped both; one begun at T + 900 only the claim.
    expect(stalledByDefragmentation(spans, T + 500, 1_000).sort()).toEqual(['m2', 'm3']);
    expect(stalledByDefragmentation(spans, T + 900, 1_000)).toEqual(['m3']);
    // A look that ended before any began overlapped none.
    expect(stalledByDefragmentation(spans, T - 5_000, 1_000)).toEqual([]);
    expect(defragmentationSpans(emptyMaintenanceRecord(), T)).toEqual([]);
  });
});
