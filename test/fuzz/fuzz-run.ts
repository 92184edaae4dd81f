// What every fuzz file shares: a repeatable seed, fast-check's parameters, a count of the cases
// generated, and the rule that nothing rejects unhandled while the file runs.
import type fc from 'fast-check';
import { afterAll, beforeAll, expect } from 'vitest';

/** Fixed by default so a run is repeatable; FUZZ_SEED=random (or a number) explores further. */
export const seed = process.env.FUZZ_SEED === 'random' ? Date.now() : Number(process.env.FUZZ_SEED ?? 20261130);

export const params = (numRuns: number): fc.Parameters<unknown> => ({ numRuns, seed });

/**
 * Registers the file's hooks: unhandled rejections are collected while it runs and must be none;
 * at the end it says how many cases were generated (`said(count)`) and the seed that replays them.
 */
export function fuzzFile(said: (count: number) => string): { generated(): void } {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => void rejections.push(reason);
  let count = 0;
  beforeAll(() => {
    process.on('unhandledRejection', onRejection);
  });
  afterAll(() => {
    process.off('unhandledRejection', onRejection);
    console.log(`${said(count)} (seed ${seed})`);
    expect(rejections).toEqual([]);
  });
  return { generated: () => void count++ };
}
