// One way to back off between tries: cockatiel's retry policies, with this delay schedule.
import { ExponentialBackoff, noJitterGenerator } from 'cockatiel';

/** Waits `firstMs`, then twice as long each time, never more than `capMs`. */
export const doublingBackoff = (firstMs: number, capMs: number): ExponentialBackoff<number> =>
  new ExponentialBackoff({ generator: noJitterGenerator, initialDelay: firstMs, maxDelay: capMs });
