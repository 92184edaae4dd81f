// Time as a port, so every timing decision can be driven by a test.

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}
