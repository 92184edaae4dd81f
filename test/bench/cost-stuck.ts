// A stuck incident's schedule, from the product's own pure planner: the leader's path cut and no
// leader ever settled (ELECTION_IN_PROGRESS on every look) until the incident deadline blocks it.
// Each look is plan() on the view a probe would take then, with the incident advanced as
// schedule-retry advances it; the next look comes at the retry's time plus the hops of a round.
// So the count follows the planner's waits (resample-wait.ts) as they change.
import { MIN_SCHEDULER_WAIT_MS } from '../../functions/adapters/aws/scheduler.ts';
import type { Decision } from '../../functions/core/common/decision.ts';
import { plan } from '../../functions/core/plan/plan.ts';
import type { Policy } from '../../functions/core/policy/policy.ts';
import { waitingReasons } from '../../functions/core/common/reason-table.ts';
import { waitsInARowAfter } from '../../functions/core/waits/resample-wait.ts';
import { withView } from '../../functions/core/view/view-history.ts';
import type { ClusterView } from '../../functions/core/view/view.ts';
import { cluster, id } from '../unit/core/fixtures.ts';

export interface StuckSchedule {
  /** Probes, each followed by one plan. */
  looks: number;
  /** Retries through SQS (under a minute) and through Scheduler. */
  shortWaits: number;
  schedules: number;
  ending: Decision;
  elapsedMs: number;
}

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
/** Scheduler fires within its minute: the mean, as the Scheduler fake's default. */
const SCHEDULER_LATE_MS = 30_000;
/** The AWS adapter never asks Scheduler for less than this lead. */
const SCHEDULER_MIN_LEAD_MS = MIN_SCHEDULER_WAIT_MS + 1_000;

/** `roundMs`: what a round adds to its wait (hops and the functions' own time), measured on the sim. */
export function stuckSchedule(policy: Policy, roundMs: number): StuckSchedule {
  let now = T0 + roundMs;
  let views: ClusterView[] = [];
  let attempt = 0;
  let waits = 0;
  let last: Decision | undefined;
  let looks = 0;
  let shortWaits = 0;
  let schedules = 0;
  for (;;) {
    views = withView(views, cluster(now, 3, { leader: 'none', override: { 0: { paths: 'refused' } } }));
    const decision = plan({
      samples: views,
      targetId: id(0),
      incident: { openedAt: T0, attempt: attempt - waits, immediateReprobes: 0, waitsInARow: waitsInARowAfter(last) },
      remediation: { retryCount: 0 },
      policy,
      now,
      random: () => 0.5,
    });
    looks++;
    if (decision.kind !== 'retry') return { looks, shortWaits, schedules, ending: decision, elapsedMs: now - T0 };
    const wait = decision.at - now;
    if (wait < MIN_SCHEDULER_WAIT_MS) {
      shortWaits++;
      now = decision.at + roundMs;
    } else {
      schedules++;
      now = Math.max(decision.at, now + SCHEDULER_MIN_LEAD_MS) + SCHEDULER_LATE_MS + roundMs;
    }
    attempt++;
    if (waitingReasons.includes(decision.reason)) waits++;
    last = decision;
  }
}
