// How long each function's step may take, from the policy: every call it makes has a deadline, so
// the sum is a bound. The step's lease on its incident lasts this long; past it, the holder is
// taken for dead and a redelivery may run the step again.
import type { Policy } from '../policy/index.ts';
import { maxProbeDeadlineMs } from './probe-deadline.ts';
import { VIEW_LIMITS } from '../common/index.ts';

export type StepName = 'probe-members' | 'move-leader' | 'schedule-retry' | 'remediate';

/** Slack for the store and bus calls around the etcd calls, and for a slow machine. */
const MARGIN_MS = 30_000;

/** Ten election timeouts cover a split vote or two; a healthy cluster elects within one or two. */
export const electionWaitMs = (policy: Pick<Policy, 'electionTimeoutMs'>): number => Math.max(5_000, 10 * policy.electionTimeoutMs);

/** One term of a step's budget: what it is, the policy fields that set it, and how long it may take. */
export interface BudgetPart {
  what: string;
  fields: readonly (keyof Policy)[];
  ms: number;
}

/** A step's budget term by term, so a budget that is too long can name what makes it so. */
export function stepBudgetParts(step: StepName, policy: Policy, members: number): BudgetPart[] {
  // A probe may wait longer than one call deadline when the network is slow (probe-deadline.ts).
  const probeMs = 2 * maxProbeDeadlineMs(policy);
  // The longest probe deadline is 30 s unless the call deadline is longer: only then is it the policy's.
  const probeFields: BudgetPart['fields'] = policy.callTimeoutMs >= maxProbeDeadlineMs(policy) ? ['callTimeoutMs'] : [];
  const probes = (n: number): BudgetPart => ({
    what: `${n} probe${n === 1 ? '' : 's'} of 2 × the longest probe deadline`,
    fields: probeFields,
    ms: n * probeMs,
  });
  const size = Math.max(1, members);
  const everyPath = (n: number): BudgetPart => ({
    what: `${n === 1 ? '' : `${n} × `}${size} members × ${policy.pathOrder.length} paths × callTimeoutMs`,
    fields: ['callTimeoutMs', 'pathOrder'],
    ms: n * size * policy.pathOrder.length * policy.callTimeoutMs,
  });
  const margin: BudgetPart = { what: 'the store and the bus', fields: [], ms: MARGIN_MS };
  switch (step) {
    case 'probe-members':
      return [probes(1), margin];
    case 'move-leader':
      // The permission asked before any move (one call per healthy member's path), then the moves.
      return [probes(2), everyPath(2), margin];
    case 'schedule-retry':
      return [margin];
    case 'remediate':
      return [
        probes(3),
        ...(policy.snapshotBeforeRemove
          ? [{ what: 'snapshotTimeoutMs', fields: ['snapshotTimeoutMs', 'snapshotBeforeRemove'], ms: policy.snapshotTimeoutMs } satisfies BudgetPart]
          : []),
        everyPath(1),
        { what: 'the wait for a new leader, 10 × electionTimeoutMs', fields: ['electionTimeoutMs'], ms: electionWaitMs(policy) },
        { what: 'actuatorTimeoutMs', fields: ['actuatorTimeoutMs'], ms: policy.actuatorTimeoutMs },
        margin,
      ];
  }
}

export const stepBudgetMs = (step: StepName, policy: Policy, members: number): number =>
  stepBudgetParts(step, policy, members).reduce((sum, part) => sum + part.ms, 0);

/**
 * How long an open incident may stay unchanged before a sweep that cannot see its timers takes it
 * for stalled: longer than any wait it may be on (the backoff cap) and any step it may be running,
 * at the largest cluster a view holds.
 */
export const stallWindowMs = (policy: Policy): number => Math.max(policy.backoff.capMs, stepBudgetMs('remediate', policy, VIEW_LIMITS.members)) + 60_000;
