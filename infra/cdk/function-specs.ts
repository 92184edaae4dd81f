// The six functions and what each may do. The pipeline functions are the catalogue's; the intake
// stands outside it, turning AWS health signals into MemberUnhealthy; step-failed is the pipeline
// functions' on-failure destination, ending or resuming an incident whose step failed every try.
import { Duration } from 'aws-cdk-lib';
import { functionNames, type FunctionName } from '../../events/catalogue.ts';
import { FUNCTION_TIMEOUTS_MS } from '../../functions/core/budget/index.ts';

export type StackFunctionName = FunctionName | 'intake' | 'step-failed';

export interface FunctionSpec {
  readonly timeout: Duration;
  readonly memorySize: number;
  /**
   * Runs incident steps. Any step may carry out what an earlier step left in the incident's
   * outbox (functions/app/common/step.ts, flushOutbox): publish events and schedule retries, by
   * Scheduler or by the short-wait queue. So each pipeline function gets both, scoped to this
   * construct's bus, group and queue. The scheduler role and the queue's pipe reach only this bus,
   * so scheduling adds no reach beyond publishing.
   */
  readonly pipeline: boolean;
}

// The timeouts are core's table, the one the budget rule holds every cluster's policy to.
const timeout = (name: StackFunctionName): Duration => Duration.millis(FUNCTION_TIMEOUTS_MS[name]);

export const functionSpecs = {
  'probe-members': { timeout: timeout('probe-members'), memorySize: 512, pipeline: true },
  'move-leader': { timeout: timeout('move-leader'), memorySize: 512, pipeline: true },
  'schedule-retry': { timeout: timeout('schedule-retry'), memorySize: 256, pipeline: true },
  remediate: { timeout: timeout('remediate'), memorySize: 512, pipeline: true },
  intake: { timeout: timeout('intake'), memorySize: 256, pipeline: false },
  'step-failed': { timeout: timeout('step-failed'), memorySize: 256, pipeline: true },
} as const satisfies Record<StackFunctionName, FunctionSpec>;

export const stackFunctionNames = [...functionNames, 'intake', 'step-failed'] as const satisfies readonly StackFunctionName[];

/** The catalogue's functions: the steps whose invocations that failed every try go to step-failed. */
export const isStep = (name: StackFunctionName): name is FunctionName => (functionNames as readonly string[]).includes(name);

/** The functions that run incident steps and so may publish any outcome: every outcome metric is summed over them. */
export const pipelineFunctionNames = stackFunctionNames.filter((name) => functionSpecs[name].pipeline);

/** `probe-members` → `ProbeMembers`, for construct ids. */
export const pascal = (name: string): string =>
  name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
