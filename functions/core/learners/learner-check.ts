// When the periodic learner check looks at a cluster on AWS, where one scheduled round every
// LEARNER_CHECK_ROUND_MS asks for every registered cluster's check. Pure.

/** How often the AWS round runs: the EventBridge schedule rule's rate. */
export const LEARNER_CHECK_ROUND_MS = 300_000;

/** What the schedule rule hands probe-members, so it runs the round (and nothing else does). */
export const LEARNER_CHECK_ROUND_INPUT = { etcdRemediator: 'learner-check-round' } as const;

/**
 * Whether the round at `at` checks a cluster checked every `everyMs`: every round when that is
 * one round or less, else the rounds a multiple of `everyMs` fell in since the round before, so a
 * cluster is checked about once a period, rounded up to whole rounds. 0: never.
 */
export function learnerCheckDue(at: number, everyMs: number, roundMs = LEARNER_CHECK_ROUND_MS): boolean {
  if (everyMs === 0) return false;
  if (everyMs <= roundMs) return true;
  return Math.floor(at / everyMs) > Math.floor((at - roundMs) / everyMs);
}
