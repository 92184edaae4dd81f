// Test support: the next lab (or world) of a file, started while the tests before it run. etcd 3.4
// refuses a member remove until its members have been connected for 5 s ("unhealthy cluster", see
// storm/support.ts settle), so a test that removes a member from a lab it has only just started
// spends those seconds in retries; a lab started a test ahead has served them, or most of them,
// when it is taken. Each lab is still the test's own: fresh, and torn down by the test that took it.
import { afterAll } from 'vitest';

export interface StartedAhead<T> {
  /** The oldest one started ahead (or one started now), and more behind it while takes remain. */
  take(): Promise<T>;
}

/**
 * For a file that takes `takes` of them, one per test, in order, keeping `ahead` (default 1)
 * started beyond the one taken: 2 where a test is too short for the next lab to age enough behind
 * it. They boot one after another, never two at once. One started and never taken (a test left
 * out by a filter, or a count too high) is stopped after the file.
 */
export function startedAhead<T>(
  takes: number,
  start: () => Promise<T>,
  stop: (started: T) => Promise<void>,
  options: { ahead?: number } = {},
): StartedAhead<T> {
  const ahead = options.ahead ?? 1;
  const queue: Promise<T>[] = [];
  let begun = 0;
  let last: Promise<unknown> = Promise.resolve();
  const begin = (): void => {
    const next = last.then(start, start);
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
  return {
    take() {
      if (queue.length === 0) begin();
      const taken = queue.shift()!;
      while (queue.length < ahead && begun < takes) begin();
      return taken;
    },
  };
}
