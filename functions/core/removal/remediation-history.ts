// KCP's remediation history (checkRetryLimits): how many remediations of one target chain together.

export interface RemediationHistory {
  lastRemediatedAt?: number;
  /**
   * Remediations in the current chain: each within minHealthyPeriod of the one before, the last
   * within minHealthyPeriod of now. 0 when the target has been healthy that long. The next
   * remediation would be retry number `retryCount`, so KCP parity blocks when retryCount > maxRetry.
   */
  retryCount: number;
}

/**
 * KCP's retry count from remediation times (any order). Remediations chain while each follows the
 * one before within minHealthyPeriod; a gap longer than that, up to now, starts a fresh count.
 */
export function remediationHistoryFrom(times: readonly number[], options: { minHealthyPeriodMs: number; now: number }): RemediationHistory {
  const newestFirst = [...times].sort((a, b) => b - a);
  const last = newestFirst[0];
  if (last === undefined) return { retryCount: 0 };
  if (options.now - last > options.minHealthyPeriodMs) return { lastRemediatedAt: last, retryCount: 0 };
  let retryCount = 1;
  while (retryCount < newestFirst.length && newestFirst[retryCount - 1]! - newestFirst[retryCount]! <= options.minHealthyPeriodMs) {
    retryCount++;
  }
  return { lastRemediatedAt: last, retryCount };
}
