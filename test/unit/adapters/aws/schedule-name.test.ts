import { describe, expect, it } from 'vitest';
import { MAX_SCHEDULE_NAME, scheduleName } from '../../../../functions/adapters/aws/schedule-name.ts';

const ALLOWED = /^[0-9a-zA-Z\-_.]{1,64}$/;

describe('schedule names', () => {
  it('keeps a name Scheduler accepts as it is', () => {
    expect(scheduleName('inc-20250601-120002-prod-eu-1-a-retry-3')).toBe('inc-20250601-120002-prod-eu-1-a-retry-3');
  });

  it('cleans characters Scheduler refuses and adds a hash, so cleaned names cannot collide', () => {
    const a = scheduleName('inc/1:retry 2');
    const b = scheduleName('inc:1/retry 2');
    expect(a).toMatch(/^inc_1_retry_2-[0-9a-f]{12}$/);
    expect(b).toMatch(ALLOWED);
    expect(a).not.toBe(b);
    expect(scheduleName('inc_1_retry_2')).toBe('inc_1_retry_2');
  });

  it('cuts a long name to 64 characters with a hash, different for names differing only at the end', () => {
    const long = (n: number) => `${'i'.repeat(120)}-retry-${n}`;
    const [a, b] = [scheduleName(long(1)), scheduleName(long(2))];
    expect(a).toHaveLength(MAX_SCHEDULE_NAME);
    expect(a).toMatch(ALLOWED);
    expect(a).not.toBe(b);
    expect(scheduleName(long(1))).toBe(a);
  });

  it('gives an empty name a valid one', () => {
    expect(scheduleName('')).toMatch(ALLOWED);
  });
});
