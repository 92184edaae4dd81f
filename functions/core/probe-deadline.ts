// On a slow network a probe whose every seed timed out learns nothing, and the next one with the
// same deadline would learn nothing too: each such probe in a row doubles the deadline, up to a cap.
import type { Policy } from './policy.ts';
import type { ClusterView } from './view.ts';

/** The longest a probe may wait: the call deadline, or 30 s when that is shorter. */
export const maxProbeDeadlineMs = (policy: Pick<Policy, 'callTimeoutMs'>): number => Math.max(policy.callTimeoutMs, 30_000);

/** No member list, and every seed that was asked ran out of time. */
export const timedOutEverywhere = (view: ClusterView): boolean =>
  view.members.length === 0 && view.listFailures.length > 0 && view.listFailures.every((f) => f.reachability === 'timeout');

/** The deadline for the next probe, after `views` (oldest first). */
export function probeDeadlineMs(policy: Pick<Policy, 'callTimeoutMs'>, views: readonly ClusterView[]): number {
  let slow = 0;
  for (let i = views.length - 1; i >= 0 && timedOutEverywhere(views[i]!); i--) slow++;
  return Math.min(policy.callTimeoutMs * 2 ** slow, maxProbeDeadlineMs(policy));
}
