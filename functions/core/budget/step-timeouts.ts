// Each function's Lambda timeout: the one table the stack gives its functions
// (infra/cdk/function-specs.ts) and the budget rule (step-budget-fit.ts) holds a policy to, so the
// two cannot drift apart. Pure data.
import type { StepName } from './step-budget.ts';

export type TimedFunctionName = StepName | 'intake' | 'step-failed';

/** The longest timeout Lambda allows. */
export const LAMBDA_MAX_TIMEOUT_MS = 900_000;

/** Room a step's budget leaves under its timeout: the runtime's own start and the handler's wrapping. */
export const TIMEOUT_MARGIN_MS = 60_000;

export const FUNCTION_TIMEOUTS_MS = {
  // One probe: its deadline doubles up to 30 s on a slow network (probe-deadline.ts).
  'probe-members': 180_000,
  // Two probes, the permission asked on every member's paths, then moves tried candidate by candidate.
  'move-leader': 600_000,
  'schedule-retry': 90_000,
  // Probes, an optional snapshot, MemberRemove, a wait for a new leader and the actuator: the
  // longest Lambda allows, so a step is never cut off between MemberRemove and its record.
  remediate: LAMBDA_MAX_TIMEOUT_MS,
  // Reads the directory (instance or node → cluster and member), writes dead letters, publishes.
  intake: 30_000,
  // Carries out the incident's outbox, then resumes it (a schedule) or blocks it (an event).
  'step-failed': 30_000,
} as const satisfies Record<TimedFunctionName, number>;
