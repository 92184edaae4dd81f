// When the AWS round checks a cluster: every round for a period of one round or less, about once a
// period past that (rounded up to whole rounds), never with 0.
import { describe, expect, it } from 'vitest';
import { learnerCheckDue, LEARNER_CHECK_ROUND_MS } from '../../../../functions/core/learners/learner-check.ts';

const MIN = 60_000;
/** The rounds of an hour, starting at an arbitrary offset, as a rate rule's fall. */
const rounds = (offset: number, count: number) => Array.from({ length: count }, (_, i) => 1_764_000_000_000 + offset + i * LEARNER_CHECK_ROUND_MS);

describe('learnerCheckDue', () => {
  it('is every round for a period of a round or less, and never for 0', () => {
    for (const at of rounds(17_123, 12)) {
      expect(learnerCheckDue(at, 5 * MIN)).toBe(true);
      expect(learnerCheckDue(at, 30_000)).toBe(true);
      expect(learnerCheckDue(at, 0)).toBe(false);
    }
  });

  it.each([10, 15, 60])("is about once every %i minutes past that, whatever the rounds' offset", (minutes) => {
    for (const offset of [0, 1, 91_000, 299_999]) {
      const due = rounds(offset, 24).filter((at) => learnerCheckDue(at, minutes * MIN));
      expect(due).toHaveLength(Math.round((24 * 5) / minutes));
      // Never closer than a period less a round, never further apart than the period rounded up to rounds.
      for (let i = 1; i < due.length; i++) {
        expect(due[i]! - due[i - 1]!).toBeGreaterThanOrEqual(minutes * MIN - LEARNER_CHECK_ROUND_MS);
        expect(due[i]! - due[i - 1]!).toBeLessThanOrEqual(Math.ceil(minutes / 5) * LEARNER_CHECK_ROUND_MS);
      }
    }
  });
});
