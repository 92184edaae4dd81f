// Waiting on a condition with a deadline: poll, never sleep-and-hope.
import { setTimeout as sleep } from 'node:timers/promises';

/** Thrown by a probe to stop waiting at once: the condition can never hold. */
export class WaitAborted extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WaitAborted';
  }
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Says what was awaited, for the timeout message. */
  what: string;
}

/**
 * Calls `probe` until it returns a value other than undefined, or the deadline passes. A thrown
 * error counts as "not yet" (the last one is reported on timeout), except WaitAborted, which
 * ends the wait at once.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
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
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${options.timeoutMs}ms waiting for ${options.what}: ${lastProblem}`);
    }
    await sleep(intervalMs);
  }
}
