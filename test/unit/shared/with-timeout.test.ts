import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { settlesWithin, withTimeout } from '../../../functions/lib/with-timeout.ts';

const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
const never = (): Promise<never> => new Promise<never>(() => undefined);

describe('withTimeout', () => {
  it('returns the answer and leaves no timer behind', async () => {
    const before = timers();
    await expect(
      withTimeout(
        60_000,
        async () => 'answer',
        () => new Error('late'),
      ),
    ).resolves.toBe('answer');
    expect(timers()).toBe(before);
  });

  it('throws the caller’s error once the time is up, and aborts the work’s signal', async () => {
    let seen: AbortSignal | undefined;
    const started = performance.now();
    const outcome = withTimeout(
      40,
      (signal) => {
        seen = signal;
        return never();
      },
      () => new Error('no answer within 40 ms'),
    );
    await expect(outcome).rejects.toThrow(/^no answer within 40 ms$/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    expect(seen?.aborted).toBe(true);
  });

  it('names the time-out in the caller’s words even when the work throws as it is aborted', async () => {
    const outcome = withTimeout(
      10,
      (signal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted by the signal')))),
      () => new Error('late'),
    );
    await expect(outcome).rejects.toThrow(/^late$/);
  });

  it('passes the work’s own failure through, and leaves its signal alone when it answered', async () => {
    let seen: AbortSignal | undefined;
    await expect(
      withTimeout(
        60_000,
        async () => Promise.reject(new Error('refused')),
        () => new Error('late'),
      ),
    ).rejects.toThrow(/^refused$/);
    await withTimeout(
      60_000,
      async (signal) => {
        seen = signal;
      },
      () => new Error('late'),
    );
    expect(seen?.aborted).toBe(false);
  });

  it('a bound past what setTimeout can hold waits, rather than firing at once', async () => {
    await expect(
      withTimeout(
        2 ** 31 + 1_000,
        () => sleep(20, 'answer'),
        () => new Error('late'),
      ),
    ).resolves.toBe('answer');
  });
});

describe('settlesWithin', () => {
  it('is true when the promise settles in time, either way, and false when it does not', async () => {
    await expect(settlesWithin(60_000, Promise.resolve(1))).resolves.toBe(true);
    await expect(settlesWithin(60_000, Promise.reject(new Error('refused')))).resolves.toBe(true);
    await expect(settlesWithin(20, never())).resolves.toBe(false);
  });
});
