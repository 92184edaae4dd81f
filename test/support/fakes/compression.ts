// Time compression for the fakes: the delays a service adds by itself (Scheduler's minute of
// precision, SQS's visibility timeout, Lambda's retry waits, EventBridge's delivery backoff) run
// as documented by default, and a test divides them by a factor to keep its run short: at 1000 a
// documented minute is 60 ms. The times a caller asks for (an at(), a DelaySeconds) are not
// compressed: they stay the caller's.

/** A documented delay under a compression factor (1, or undefined, for as documented). */
export function compress(ms: number, compression: number | undefined): number {
  const factor = compression ?? 1;
  if (!Number.isFinite(factor) || factor < 1) throw new RangeError(`compression must be a finite number of at least 1, got ${String(compression)}`);
  return ms / factor;
}
