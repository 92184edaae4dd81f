// How long each function's step may take, from the policy: every call it makes has a deadline, so
// the sum is a bound. The step's lease on its incident lasts this long; past it, the holder is
// taken for dead and a redelivery may run the step again.
import type { Policy } from './policy.ts';
import { maxProbeDeadlineMs } from './probe-deadline.ts';

export type StepName = 'probe-members' | 'move-leader' | 'schedule-retry' | 'remediate';

/** Slack for the store and bus calls around the etcd calls, and for a slow machine. */
const MARGIN_MS = 30_000;

/** Ten election timeouts cover a split vote or two; a healthy cluster elects within one or two. */
export const electionWaitMs = (policy: Pick<Policy, 'electionTimeoutMs'>): number => Math.max(5_000, 10 * policy.electionTimeoutMs);

export function stepBudgetMs(step: StepName, policy: Policy, members: number): number {
  // A probe may wait longer than one call deadline when the network is slow (probe-deadline.ts).
  const probe = 2 * maxProbeDeadlineMs(policy);
  const everyPath = Math.max(1, members) * policy.pathOrder.length * policy.callTimeoutMs;
  switch (step) {
    case 'probe-members':
      return probe + MARGIN_MS;
    case 'move-leader':
      // The permission asked before any move (one call per healthy member's path), then the moves.
      return 2 * probe + 2 * everyPath + MARGIN_MS;
    case 'schedule-retry':
      return MARGIN_MS;
    case 'remediate':
      return (
        3 * probe +
        (policy.snapshotBeforeRemove ? policy.snapshotTimeoutMs : 0) +
        everyPath +
        electionWaitMs(policy) +
        policy.actuatorTimeoutMs +
        MARGIN_MS
      );
  }
}

/**
 * How long an open incident may stay unchanged before a sweep that cannot see its timers takes it
 * for stalled: longer than any wait it may be on (the backoff cap) and any step it may be running.
 */
export const stallWindowMs = (policy: Policy): number => Math.max(policy.backoff.capMs, stepBudgetMs('remediate', policy, 7)) + 60_000;
