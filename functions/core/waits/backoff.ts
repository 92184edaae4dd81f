// Exponential backoff with full jitter: spreads retries of many incidents over the whole window.
import type { Policy } from '../policy/index.ts';

/** random() * min(cap, base * 2^attempt), in whole milliseconds; `random` returns [0, 1). */
export function backoffDelay(attempt: number, policy: Pick<Policy, 'backoff'>, random: () => number): number {
  const { baseMs, capMs } = policy.backoff;
  // Past 2^52 the cap has long won; bounding the exponent keeps 0 * 2^n finite.
  const exponent = Number.isNaN(attempt) ? 0 : Math.min(52, Math.max(0, Math.floor(attempt)));
  const ceiling = Math.min(capMs, baseMs * 2 ** exponent);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * ceiling);
}
