// Time as a port, so every timing decision can be driven by a test.

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface ManualClock extends Clock {
  set(at: number): void;
  advance(ms: number): void;
}

/** A clock that moves only when told to. */
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
  };
}
