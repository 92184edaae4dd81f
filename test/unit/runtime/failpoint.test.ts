// The failpoint wrapper: which name it takes, that unset it is the store itself, and that it dies
// only after the named step is written (a marker only when this call recorded it).
import { describe, expect, it } from 'vitest';
import type { IncidentJournal, JournalEntry, JournalInput } from '../../../functions/ports/incident-store.ts';
import { FAILPOINT_ENV, failpointFrom, withFailpoint, type Failpoint } from '../../../infra/runtime/failpoint.ts';
import { moveMadeLine, sampleLine } from '../../support/journal-lines.ts';

function memoryJournal(): IncidentJournal & { entries: JournalEntry[] } {
  const entries: JournalEntry[] = [];
  return {
    entries,
    async appendJournal(_id: string, entry: JournalInput) {
      entries.push({ ...entry, isStepMarker: false });
    },
    async journal() {
      return entries;
    },
    async markStep(_id: string, entry: JournalInput) {
      if (entries.some((e) => e.isStepMarker && e.step === entry.step)) return false;
      entries.push({ ...entry, isStepMarker: true });
      return true;
    },
    async stepDone(_id: string, step: string) {
      return entries.some((e) => e.isStepMarker && e.step === step);
    },
  };
}

class Died extends Error {}

describe('failpoints', () => {
  it('reads a known name from the environment, nothing when unset or empty, and refuses an unknown one', () => {
    expect(failpointFrom({})).toBeUndefined();
    expect(failpointFrom({ [FAILPOINT_ENV]: '' })).toBeUndefined();
    expect(failpointFrom({ [FAILPOINT_ENV]: ' member-removed ' })).toBe('member-removed');
    expect(() => failpointFrom({ [FAILPOINT_ENV]: 'member-remove' })).toThrow(
      /^ETCD_REMEDIATOR_FAILPOINT=member-remove: no such failpoint \(one of probed, .*lock-released; unset it to run normally\)$/,
    );
  });

  it('unset, hands over the store itself', () => {
    const store = memoryJournal();
    expect(withFailpoint(store, undefined)).toBe(store);
  });

  it('dies right after the named step is written, and not before', async () => {
    const store = memoryJournal();
    const died: Failpoint[] = [];
    const wrapped = withFailpoint(store, 'member-removed', (f) => {
      died.push(f);
      throw new Died();
    });
    await wrapped.markStep('i', { at: 1, ...sampleLine('lock-taken') });
    await wrapped.appendJournal('i', { at: 2, ...sampleLine('probed') });
    expect(died).toEqual([]);
    await expect(wrapped.markStep('i', { at: 3, ...sampleLine('member-removed') })).rejects.toBeInstanceOf(Died);
    expect(died).toEqual(['member-removed']);
    expect(store.entries.at(-1)).toMatchObject({ step: 'member-removed', isStepMarker: true });
    // A marker already there is not written again: that call is no boundary.
    expect(await wrapped.markStep('i', { at: 4, ...sampleLine('member-removed') })).toBe(false);
    expect(died).toHaveLength(1);
    // Every other method is the store's own.
    expect(await wrapped.stepDone('i', 'member-removed')).toBe(true);
  });

  it('names a per-attempt marker without its attempt, and a journal line by its step', async () => {
    const died: string[] = [];
    const die = (f: Failpoint) => {
      died.push(f);
    };
    await withFailpoint(memoryJournal(), 'leader-move-made', die).markStep('i', { at: 1, ...moveMadeLine(3) });
    await withFailpoint(memoryJournal(), 'lock-released', die).appendJournal('i', { at: 1, ...sampleLine('lock-released') });
    expect(died).toEqual(['leader-move-made', 'lock-released']);
  });
});
