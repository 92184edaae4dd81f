// Waiting on a condition with a deadline: poll, never sleep-and-hope.
import { setTimeout as sleep } from 'node:timers/promises';

/** Thrown by a probe to stop waiting at once: the condition can never hold. */
export class WaitAborted extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WaitAborted';
  }
}

/** The deadline passed with the condition never holding; `lastProblem` is what the probe said last. */
export class WaitTimedOut extends Error {
  readonly lastProblem: string;
  constructor(message: string, lastProblem: string) {
    super(message);
    this.name = 'WaitTimedOut';
    this.lastProblem = lastProblem;
  }
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Says what was awaited, for the timeout message. */
  what: string;
  /** Where the deadline is read and the polls wait: the caller's clock (the Clock port's shape), the system's by default. */
  clock?: { now(): number; sleep?(ms: number): Promise<void> };
}

/**
 * Calls `probe` until it returns a value other than undefined, or the deadline passes (then
 * WaitTimedOut). A thrown error counts as "not yet" (the last one is reported on timeout), except
 * WaitAborted, which ends the wait at once.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const clock = options.clock ?? Date;
  const deadline = clock.now() + options.timeoutMs;
  const intervalMs = options.intervalMs ?? 50;
  let lastProblem = 'condition never held';
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      if (error instanceof WaitAborted) throw error;
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    if (clock.now() >= deadline) {
      throw new WaitTimedOut(`timed out after ${options.timeoutMs}ms waiting for ${options.what}: ${lastProblem}`, lastProblem);
    }
    await (options.clock?.sleep ? options.clock.sleep(intervalMs) : sleep(intervalMs));
  }
}

/**
 * The condition within the deadline, or undefined once it passes: for a wait whose end is an
 * answer ("no leader stood"). A probe that throws ends the wait with its own error: a store or a
 * bug is never read as "not yet".
 */
export async function waitWithin<T>(probe: () => Promise<T | undefined>, options: WaitOptions): Promise<T | undefined> {
  try {
    return await waitFor(
      () =>
        probe().catch((error: unknown) => {
          throw new WaitAborted('the probe failed', { cause: error });
        }),
      options,
    );
  } catch (error) {
    if (error instanceof WaitTimedOut) return undefined;
    throw error instanceof WaitAborted && error.cause !== undefined ? error.cause : error;
  }
}
