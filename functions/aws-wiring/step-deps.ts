// What a step gets on AWS without cluster access (schedule-retry, step-failed; cluster-deps.ts adds
// it for the others): what every function has (shared-deps.ts), the directory, and the scheduler
// (one-time schedules and the short-wait queue), since any step may carry out a schedule an earlier
// step left in the incident's outbox. No etcd or Kubernetes client is reachable from here.
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createDynamoDirectory } from '../adapters/aws/dynamodb-directory.ts';
import { createAwsScheduler } from '../adapters/aws/scheduler.ts';
import type { Deps } from '../app/common/index.ts';
import type { ClusterDirectory, MemberLookup } from '../ports/cluster-directory.ts';
import { clientConfig, requireEnv, type Env } from './env.ts';
import { lazySecretsSource } from './lazy-secrets.ts';
import { sharedDepsFromEnv, type SharedDeps } from './shared-deps.ts';

type Directory = ClusterDirectory & MemberLookup;
export type StepDeps = Deps & { directory: Directory };

/** Checked all at once, so one error names every variable missing. */
const STEP_ENV = ['TABLE_NAME', 'BUS_NAME', 'BUS_ARN', 'SCHEDULE_GROUP', 'SCHEDULER_ROLE_ARN', 'SCHEDULER_DLQ_ARN', 'SHORT_WAIT_QUEUE_URL'] as const;

/** The registered clusters, each entry under POLICY_DEFAULTS, its secrets read through a Secrets Manager client loaded on the first read. */
export const directoryFromEnv = (env: Env, { dynamo, tableName, policyDefaults }: SharedDeps): Directory =>
  createDynamoDirectory({ client: dynamo, tableName, secrets: lazySecretsSource(env), ...(policyDefaults ? { policyDefaults } : {}) });

export function stepDepsFromEnv(env: Env, functionName: string): StepDeps {
  const vars = requireEnv(env, functionName, STEP_ENV);
  const shared = sharedDepsFromEnv(env, functionName);
  const { store, bus, clock, log } = shared;
  const scheduler = createAwsScheduler({
    scheduler: new SchedulerClient(clientConfig(env, 'SCHEDULER')),
    sqs: new SQSClient(clientConfig(env, 'SQS')),
    groupName: vars.SCHEDULE_GROUP,
    busArn: vars.BUS_ARN,
    roleArn: vars.SCHEDULER_ROLE_ARN,
    dlqArn: vars.SCHEDULER_DLQ_ARN,
    shortWaitQueueUrl: vars.SHORT_WAIT_QUEUE_URL,
    clock,
  });
  return { store, bus, scheduler, directory: directoryFromEnv(env, shared), clock, random: Math.random, log };
}
