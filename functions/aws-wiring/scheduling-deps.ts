// What every step shares on AWS beyond the base: the scheduler (one-time schedules and the
// short-wait queue). Any step may carry out a schedule an earlier step left in the incident's
// outbox, so every pipeline function has it. Kept apart from the etcd access so schedule-retry,
// which talks to no cluster, bundles no etcd or Kubernetes client.
import { createAwsScheduler } from '../adapters/aws/scheduler.ts';
import type { Scheduler } from '../ports/scheduler.ts';
import { baseDepsFromEnv, type BaseDeps } from './base-deps.ts';
import { schedulerClient, sqsClient } from './clients.ts';
import { requireEnv, type Env } from './env.ts';

export type SchedulingDeps = BaseDeps & { scheduler: Scheduler };

export function schedulingDepsFromEnv(env: Env, functionName: string): SchedulingDeps {
  // All checked at once, so one error names every variable missing.
  const vars = requireEnv(env, functionName, [
    'TABLE_NAME',
    'BUS_NAME',
    'BUS_ARN',
    'SCHEDULE_GROUP',
    'SCHEDULER_ROLE_ARN',
    'SCHEDULER_DLQ_ARN',
    'SHORT_WAIT_QUEUE_URL',
  ]);
  const base = baseDepsFromEnv(env, functionName);
  const scheduler = createAwsScheduler({
    scheduler: schedulerClient(env),
    sqs: sqsClient(env),
    groupName: vars.SCHEDULE_GROUP,
    busArn: vars.BUS_ARN,
    roleArn: vars.SCHEDULER_ROLE_ARN,
    dlqArn: vars.SCHEDULER_DLQ_ARN,
    shortWaitQueueUrl: vars.SHORT_WAIT_QUEUE_URL,
    clock: base.clock,
  });
  return { ...base, scheduler };
}
