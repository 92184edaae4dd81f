// One way to bound a wait: cockatiel's timeout policy. It clears its timer as soon as the work
// settles (AbortSignal.timeout's timer cannot be cleared, so every bounded call would leave one
// running), and it hands the work a signal that aborts when the time is up. Each caller names its
// own error, since the words (and for etcd the error type) are part of what callers promise.
import { timeout, TimeoutStrategy } from 'cockatiel';
import { MAX_TIMER_MS } from './timer-limit.ts';

type Bounded<T> = { inTime: true; value: T } | { inTime: false };

async function within<T>(timeoutMs: number, work: (signal: AbortSignal) => Promise<T>): Promise<Bounded<T>> {
  // The signal is aborted on timeout only: work that answered may still be using it.
  const policy = timeout(Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS), { strategy: TimeoutStrategy.Aggressive, abortOnReturn: false });
  let timedOut = false;
  const listener = policy.onTimeout(() => (timedOut = true));
  try {
    return { inTime: true, value: await policy.execute(({ signal }) => work(signal)) };
  } catch (error) {
    // Whatever the work threw once told to stop, the caller's words say what happened.
    if (timedOut) return { inTime: false };
    throw error;
  } finally {
    listener.dispose();
  }
}

/**
 * The work's answer, or `late()` thrown when `timeoutMs` passes first; the work's signal is
 * aborted then. No timer outlives the call.
 */
export async function withTimeout<T>(timeoutMs: number, work: (signal: AbortSignal) => Promise<T>, late: () => Error): Promise<T> {
  const bounded = await within(timeoutMs, work);
  if (!bounded.inTime) throw late();
  return bounded.value;
}

/** Waits for `promise` at most `timeoutMs`: true when it settled (either way) in time. */
export async function settlesWithin(timeoutMs: number, promise: Promise<unknown>): Promise<boolean> {
  const settled = promise.then(
    () => undefined,
    () => undefined,
  );
  return (await within(timeoutMs, () => settled)).inTime;
}
