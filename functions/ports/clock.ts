// Time as a port, so every timing decision can be driven by a test.

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Waits `ms` on this clock: a wait with a deadline polls through it, so a test's clock drives both. The system's timers when absent. */
  sleep?(ms: number): Promise<void>;
}
