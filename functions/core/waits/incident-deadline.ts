// The incident deadline: one comparison, asked by the planner, by a resume after the removal, by
// a step that failed on every delivery and by the sweep of stalled incidents.
import { type Decision, decidedBy } from '../common/index.ts';
import { describeDuration, describeTime } from '../view/index.ts';
import type { Policy } from '../policy/index.ts';

export const pastIncidentDeadline = (openedAt: number, now: number, policy: Pick<Policy, 'incidentDeadlineMs'>): boolean =>
  now - openedAt >= policy.incidentDeadlineMs;

export interface StalledIncident {
  incidentId: string;
  /** The target as the sentence names it. */
  name: string;
  /** Its last change: nothing has moved it since. */
  updatedAt: number;
  attempt: number;
}

/**
 * A chain that keeps stalling (a step that always fails where no on-failure path ends it) must
 * not be resumed for ever: past its deadline, the sweep ends it here.
 */
export const stalledPastDeadline = (stalled: StalledIncident, policy: Pick<Policy, 'incidentDeadlineMs'>): Extract<Decision, { kind: 'block' }> =>
  decidedBy(
    {
      kind: 'block',
      reason: 'INCIDENT_DEADLINE_EXCEEDED',
      message: `Incident ${stalled.incidentId} (${stalled.name}) made no progress since ${describeTime(stalled.updatedAt)} and is past its deadline of ${describeDuration(policy.incidentDeadlineMs)}; blocked, nothing more is done: check the dead-letter queues and the logs for the step that kept failing, then report the member again.`,
      evidence: { stalledSince: describeTime(stalled.updatedAt), attempt: stalled.attempt },
    },
    'stalled-past-deadline',
  );
