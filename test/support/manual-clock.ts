// A clock that moves only when a test says: every timing decision driven exactly.
import type { Clock } from '../../functions/ports/clock.ts';

export interface ManualClock extends Clock {
  set(at: number): void;
  advance(ms: number): void;
}

export function manualClock(start = 0): ManualClock {
  let current = start;
  return {
    now: () => current,
    set: (at) => {
      current = at;
    },
    advance: (ms) => {
      current += ms;
    },
    // A wait on this clock passes at once in its time: a poll moves it on by its interval, after a turn of the event loop.
    sleep: (ms) =>
      new Promise((resolve) =>
        setImmediate(() => {
          current += ms;
          resolve();
        }),
      ),
  };
}
