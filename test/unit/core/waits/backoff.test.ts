import { describe, it, expect } from 'vitest';
import { backoffDelay } from '../../../../functions/core/waits/retry-after-backoff.ts';
import { fixedRandom, policy } from '../fixtures.ts';

const p = policy({ backoff: { baseMs: 1_000, capMs: 60_000 } });

describe('backoffDelay: full jitter', () => {
  it.each([0, 1, 2, 3, 5, 6, 7, 10, 40, 1_000])('attempt %i stays within [0, min(cap, base·2^n))', (attempt) => {
    const ceiling = Math.min(60_000, 1_000 * 2 ** attempt);
    expect(backoffDelay(attempt, p, fixedRandom(0))).toBe(0);
    const top = backoffDelay(attempt, p, fixedRandom(0.999999));
    expect(top).toBeLessThan(ceiling);
    expect(top).toBeGreaterThanOrEqual(Math.floor(ceiling * 0.999));
    expect(backoffDelay(attempt, p, fixedRandom(0.5))).toBe(Math.floor(ceiling / 2));
  });

  it('draws from random() across the whole window', () => {
    const seq = [0.1, 0.9, 0.35];
    let k = 0;
    const random = (): number => seq[k++ % seq.length]!;
    expect([3, 3, 3].map((a) => backoffDelay(a, p, random))).toEqual([800, 7_200, 2_800]);
  });

  it.each([
    { attempt: -1, want: 500 },
    { attempt: Number.NaN, want: 500 },
    { attempt: 2.7, want: 2_000 },
  ])('treats odd attempt $attempt sanely', ({ attempt, want }) => {
    expect(backoffDelay(attempt, p, fixedRandom(0.5))).toBe(want);
  });

  it('is whole milliseconds and 0 when the base is 0', () => {
    expect(Number.isInteger(backoffDelay(3, p, fixedRandom(Math.PI / 10)))).toBe(true);
    expect(backoffDelay(2_000, policy({ backoff: { baseMs: 0, capMs: 10 } }), fixedRandom(0.5))).toBe(0);
  });
});
