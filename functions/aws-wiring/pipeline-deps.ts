// The AWS edge of probe-members, move-leader, schedule-retry, remediate and step-failed: the
// adapters a Lambda container uses, chosen from its environment, once.
import { createEtcdAccess } from '../adapters/local/etcd-access.ts';
import { createAwsScheduler } from '../adapters/aws/scheduler.ts';
import { createClusterActuator } from '../adapters/kube/cluster-api/cluster-actuator.ts';
import type { Deps } from '../app/deps.ts';
import { etcdOnlyActuator } from '../adapters/etcd/etcd-only-actuator.ts';
import type { ClusterDirectory, MemberLookup } from '../ports/cluster-directory.ts';
import { baseDepsFromEnv } from './base-deps.ts';
import { schedulerClient, sqsClient } from './clients.ts';
import { requireEnv, type Env } from './env.ts';

export type AwsDeps = Deps & { directory: ClusterDirectory & MemberLookup };

/**
 * Every step needs the scheduler, not schedule-retry alone: any step may carry out a schedule an
 * earlier step left in the incident's outbox.
 */
export function awsDepsFromEnv(env: Env = process.env, functionName = 'etcd-remediator'): AwsDeps {
  // All checked at once, so one error names every variable missing.
  const vars = requireEnv(env, functionName, ['TABLE_NAME', 'BUS_NAME', 'BUS_ARN', 'SCHEDULE_GROUP', 'SCHEDULER_ROLE_ARN', 'SCHEDULER_DLQ_ARN', 'SHORT_WAIT_QUEUE_URL']);
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
  // The same etcd3 access as the local runtime: one client per cluster, member and path, kept
  // warm for the container's life. No snapshot store on AWS yet: a policy asking for one retries
  // with SNAPSHOT_FAILED, saying so.
  const etcd = createEtcdAccess(base.clock);
  return { ...base, scheduler, etcdFor: etcd.etcdFor, actuator: createClusterActuator(base.directory, etcdOnlyActuator), random: Math.random };
}
