// Least privilege per function: every statement names this construct's own table, indexes, bus,
// schedule group, queue or secrets; the only wildcards are in names made at run time (schedules
// per incident and attempt, secrets with their random suffix), each acknowledged with why.
import { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, type IRole, type Role } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { functionSpecs, type StackFunctionName } from './function-specs.ts';
import { acknowledgeWildcardResource } from './nag.ts';

/**
 * What the store and the directory do on the table: items, conditional writes, queries on the
 * indexes. TransactWriteItems is authorised by these per item; no Scan, no table management.
 */
export const TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;

export interface Grantees {
  readonly table: ITable;
  readonly indexNames: readonly string[];
  readonly bus: IEventBus;
  readonly scheduleGroupName: string;
  readonly schedulerRole: IRole;
  readonly shortWaitQueue: IQueue;
  readonly secretArnPattern: string;
}

/** The ARN of every schedule in the group: schedule names are made per incident and attempt. */
export const schedulesArn = (stack: Stack, groupName: string): string =>
  stack.formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${groupName}/*` });

export function grantFunction(name: StackFunctionName, role: Role, on: Grantees): void {
  const spec = functionSpecs[name];
  const stack = Stack.of(role);
  role.addToPolicy(
    new PolicyStatement({
      actions: [...TABLE_ACTIONS],
      resources: [on.table.tableArn, ...on.indexNames.map((index) => `${on.table.tableArn}/index/${index}`)],
    }),
  );
  // Every function publishes: the intake its MemberUnhealthy, the pipeline its outcomes.
  role.addToPolicy(new PolicyStatement({ actions: ['events:PutEvents'], resources: [on.bus.eventBusArn] }));

  if (spec.pipeline) {
    const schedules = schedulesArn(stack, on.scheduleGroupName);
    role.addToPolicy(new PolicyStatement({ actions: ['scheduler:CreateSchedule', 'scheduler:DeleteSchedule'], resources: [schedules] }));
    acknowledgeWildcardResource(
      role,
      schedules,
      'Schedule names are made at run time, one per incident and attempt; the wildcard covers only the schedules of this construct\'s own group.',
    );
    role.addToPolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [on.schedulerRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    role.addToPolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [on.shortWaitQueue.queueArn] }));
  }

  // Every function reads the directory: each step its incident's cluster, the intake a cluster a
  // report names. A directory entry comes with its secrets from Secrets Manager, all under one
  // pattern: the etcd TLS credentials and the workload and management clusters' kubeconfigs.
  role.addToPolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [on.secretArnPattern] }));
  if (on.secretArnPattern.includes('*')) {
    acknowledgeWildcardResource(
      role,
      on.secretArnPattern,
      'Each registered cluster names its own secret (etcd client certificate, kubeconfig) under this prefix, and Secrets Manager adds a random suffix to every secret ARN; read-only, GetSecretValue only.',
    );
  }
}
