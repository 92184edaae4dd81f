// The level a request's status is compared at: a merge patch's result (what it sets, what it
// deletes), compared on the fields a person reads, its conditions and updatedAt aside (they follow
// from the write), and the status as the API server gave it.
import { describe, expect, it } from 'vitest';
import { merged, sameStatus, shownOf } from '../../../infra/kubernetes/request-watcher/status-level.ts';

const running = {
  phase: 'Running',
  reasonCode: 'LEADER_MOVED',
  message: 'moved',
  incidentId: 'i-1',
  leaderMove: 'moved',
  startedAt: '2026-12-07T10:00:00.000Z',
} as const;

describe('what a write makes of a status', () => {
  it('sets what it gives, keeps the rest, and deletes only what it clears and does not give', () => {
    const next = merged(running, { phase: 'Waiting', message: 'again' }, ['leaderMove', 'message']);
    expect(next).toEqual({ ...running, phase: 'Waiting', message: 'again', leaderMove: undefined });
    expect(next).not.toHaveProperty('leaderMove');
  });

  it('from nothing known, is what it gives', () => {
    expect(merged(undefined, { phase: 'Pending', message: 'held' }, ['completedAt'])).toEqual({ phase: 'Pending', message: 'held' });
  });
});

describe('whether two statuses differ', () => {
  it('on any field a person reads, the observed generation included', () => {
    expect(sameStatus(running, { ...running })).toBe(true);
    expect(sameStatus(running, { ...running, message: 'moved.' })).toBe(false);
    expect(sameStatus(running, { ...running, observedGeneration: 2 })).toBe(false);
    const { leaderMove: _dropped, ...withoutMove } = running;
    expect(sameStatus(running, withoutMove)).toBe(false);
  });

  it('not on its conditions or when it was written: they follow from the write', () => {
    const condition = { type: 'Ready', status: 'False', reason: 'Running', message: 'm', lastTransitionTime: '2026-12-07T10:00:00Z' } as const;
    expect(sameStatus(running, { ...running, conditions: [condition] })).toBe(true);
  });
});

describe('the status as the API server gave it', () => {
  it('its fields a person reads; nothing without a phase (never written)', () => {
    expect(shownOf({ ...running, updatedAt: '2026-12-07T10:00:01Z', observedGeneration: 1 })).toEqual({ ...running, observedGeneration: 1 });
    expect(shownOf({ message: 'x' })).toBeUndefined();
    expect(shownOf(undefined)).toBeUndefined();
  });
});
