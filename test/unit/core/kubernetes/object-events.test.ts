// What Kubernetes Events are held to, pure: the 1 kB note limit, the key the same Event is counted
// again under, its name, and the spam filter's bucket per object.
import { describe, expect, it } from 'vitest';
import { eventKey, eventName, nanosOf, NOTE_LIMIT_BYTES, spamFilter, truncateNote } from '../../../../functions/core/kubernetes/object-events.ts';

describe('truncateNote', () => {
  it('keeps a note within 1024 bytes, ending an overlong one with an ellipsis, never splitting a character', () => {
    expect(truncateNote('short')).toBe('short');
    const long = `${'é'.repeat(600)}`;
    const cut = truncateNote(long);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(NOTE_LIMIT_BYTES);
    expect(cut.endsWith('…')).toBe(true);
    expect(cut).not.toContain('\uFFFD');
    expect(truncateNote('x'.repeat(1024))).toBe('x'.repeat(1024));
  });
});

describe('dedup and spam filter', () => {
  const machine = { kind: 'Machine', apiVersion: 'cluster.x-k8s.io/v1beta1', namespace: 'default', name: 'm0', uid: 'u' };
  const said = { reason: 'LEADER_MOVED', note: 'n', type: 'Normal' as const, action: 'Approve' };

  it('one key for the same object, reason and note; another for any of them changed', () => {
    expect(eventKey(machine, said)).toBe(eventKey({ ...machine }, { ...said }));
    expect(eventKey(machine, { ...said, note: 'other' })).not.toBe(eventKey(machine, said));
    expect(eventKey({ ...machine, name: 'm1' }, said)).not.toBe(eventKey(machine, said));
  });

  it('names an Event as client-go does, <object>.<nanoseconds in hex>', () => {
    expect(eventName('m0', nanosOf(1_700_000_000_123))).toBe(`m0.${(1_700_000_000_123n * 1_000_000n).toString(16)}`);
  });

  it('lets a burst through per object, then one per refill interval', () => {
    const filter = spamFilter({ burst: 2, refillEveryMs: 1_000 });
    expect([filter.allow('a', 0), filter.allow('a', 0), filter.allow('a', 0)]).toEqual([true, true, false]);
    expect(filter.allow('b', 0)).toBe(true);
    expect(filter.allow('a', 999)).toBe(false);
    expect(filter.allow('a', 1_000)).toBe(true);
    expect(filter.allow('a', 1_001)).toBe(false);
  });
});
