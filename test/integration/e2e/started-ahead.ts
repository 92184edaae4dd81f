// Test support: the next lab (or world) of a file, started while the tests before it run. etcd 3.4
// refuses a member remove until its members have been connected for 5 s ("unhealthy cluster", see
// storm/support.ts settle), so a test that removes a member from a lab it has only just started
// spends those seconds in retries; a lab started a test ahead has served them, or most of them,
// when it is taken. Each lab is still the test's own: fresh, and torn down by the test that took it.
// One taken may have idled on a loaded machine: its leader is asked with waitForLeader, which
// waits for an agreed one, not with leader(), which looks once.
import { afterAll } from 'vitest';

export interface StartedAhead<T> {
  /**
   * The oldest one started ahead (or one started now), once those started behind it (while takes
   * remain) are up too: a boot beside a test's first steps is load those steps do not need.
   */
  take(): Promise<T>;
}

export interface StartedAheadOptions {
  /** How many to keep started beyond the one taken (default 1): 2 where a test is too short for the next to age behind it. */
  ahead?: number;
  /** Starts the first one now, not at the first take: for labs that only later tests of the file take. */
  beginNow?: boolean;
}

/**
 * For a file that takes `takes` of them, one per test, in order; `start` is told which (0 first).
 * They boot one after another, never two at once. One started and never taken (a test left out
 * by a filter, or a count too high) is stopped after the file; a failed start fails the test that
 * takes it, as a start in the test would.
 */
export function startedAhead<T>(
  takes: number,
  start: (index: number) => Promise<T>,
  stop: (started: T) => Promise<void>,
  options: StartedAheadOptions = {},
): StartedAhead<T> {
  const ahead = options.ahead ?? 1;
  const queue: Promise<T>[] = [];
  let begun = 0;
  let last: Promise<unknown> = Promise.resolve();
  const begin = (): void => {
    const index = begun;
    const next = last.then(
      () => start(index),
      () => start(index),
    );
    // Its failure is reported to the test that takes it, not as an unhandled rejection now.
    next.catch(() => undefined);
    last = next;
    queue.push(next);
    begun += 1;
  };
  afterAll(async () => {
    const unused = queue.splice(0);
    await Promise.all(unused.map((started) => started.then(stop, () => undefined)));
  });
  if (options.beginNow && takes > 0) begin();
  return {
    async take() {
      if (queue.length === 0) begin();
      const taken = queue.shift()!;
      while (queue.length < ahead && begun < takes) begin();
      // One that fails to start fails the test that takes it, not this one.
      await last.catch(() => undefined);
      return taken;
    },
  };
}
