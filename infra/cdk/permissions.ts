// Least privilege per function: every statement names this construct's own table, indexes, bus,
// schedule group, queue or secrets; the only wildcards are in names made at run time (schedules
// per incident and attempt, secrets with their random suffix), each acknowledged with why. What a
// role may publish, which items it may read or delete, are IAM conditions derived from the
// catalogue and the table's key layout, never a list kept here beside them.
import { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, ServicePrincipal, type IRole, type Role } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { emits, EVENT_SOURCE, functionNames, type DetailType } from '../../events/catalogue.ts';
import { INTAKE_READS } from '../../functions/adapters/aws/dynamodb-intake-lookup.ts';
import { DEAD_LETTERS_PK, deadLetterCounterKey, FLEET_SLOTS_PK, lockKey, openPointerPk } from '../../functions/adapters/aws/dynamodb-keys.ts';
import { SHORT_WAIT_PIPE } from '../../functions/adapters/aws/short-wait-queue.ts';
import { SNAPSHOT_PREFIX } from '../../functions/aws-wiring/lazy-snapshots.ts';
import { functionSpecs, type StackFunctionName } from './function-specs.ts';
import { acknowledgeWildcardResource } from './nag.ts';

/** What the store reads: items, batches of them, queries on the table and its indexes. No Scan. */
const READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
/** What the store writes, item by item (no BatchWriteItem, no transactions: the code uses neither). */
const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem'];

/**
 * The events that reach the bus through the Scheduler and the short-wait Pipe, on a step's
 * behalf: a RetryDue, never an outcome. Their roles may put these only; no function puts them.
 */
export const SCHEDULED_DETAIL_TYPES: readonly DetailType[] = [SHORT_WAIT_PIPE.detailType];

/**
 * What a pipeline function may publish: any outcome the catalogue lists for any step, since each
 * of them carries out whatever an earlier step of the incident left in its outbox
 * (functions/app/common/step.ts, flushLeftOutbox), and step-failed and the sweep end incidents with
 * those same outcomes. Not a report (MemberUnhealthy), not what the Scheduler and Pipe put.
 */
export const PIPELINE_PUBLISHES: readonly DetailType[] = [...new Set(functionNames.flatMap((name) => emits[name]))].filter(
  (type) => !SCHEDULED_DETAIL_TYPES.includes(type),
);

/** The intake turns outside signals into reports, and says nothing else. */
export const INTAKE_PUBLISHES: readonly DetailType[] = ['MemberUnhealthy'];

/**
 * The items a step deletes: an ended incident's open pointer (dynamodb-incidents.ts clearPointer),
 * a cluster lock it released (dynamodb-records.ts releaseLock) and the removal slot it held
 * (dynamodb-fleet.ts releaseRemovalSlot). Nothing else is ever deleted: a pause is lifted by a
 * person (resume), never by a function.
 */
export const PIPELINE_DELETES = [openPointerPk(''), lockKey('').pk, FLEET_SLOTS_PK].map((prefix) => `${prefix}*`);

/** A refused signal's dead letter and the counter that orders them: all the intake writes. */
const INTAKE_WRITES = [DEAD_LETTERS_PK, deadLetterCounterKey.pk];

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

/**
 * PutEvents on this bus, for these detail types from our source only. EventBridge authorises
 * each entry of a PutEvents by its own `events:source` and `events:detail-type` (User Guide,
 * "Using IAM policy conditions in Amazon EventBridge"); a value list matches any one of them.
 */
export const putEventsOf = (bus: IEventBus, detailTypes: readonly DetailType[]): PolicyStatement =>
  new PolicyStatement({
    actions: ['events:PutEvents'],
    resources: [bus.eventBusArn],
    conditions: { StringEquals: { 'events:source': EVENT_SOURCE, 'events:detail-type': detailTypes.length === 1 ? detailTypes[0] : [...detailTypes] } },
  });

/**
 * A service principal that may assume a role only for this account, and, when one is named, for
 * that one resource (confused-deputy protection: IAM User Guide, "The confused deputy problem").
 */
export const servicePrincipalFor = (service: string, stack: Stack, sourceArn?: string): ServicePrincipal =>
  new ServicePrincipal(service, {
    conditions: { StringEquals: { 'aws:SourceAccount': stack.account, ...(sourceArn === undefined ? {} : { 'aws:SourceArn': sourceArn }) } },
  });

export function grantFunction(name: StackFunctionName, role: Role, on: Grantees): void {
  if (functionSpecs[name].pipeline) grantPipeline(role, on);
  else grantIntake(role, on);
}

/**
 * The intake: which cluster and member a machine is, and whether a cluster is registered (those
 * items, those attributes, by projection: no secret ARN); its dead letters; MemberUnhealthy.
 */
function grantIntake(role: Role, on: Grantees): void {
  role.addToPolicy(
    new PolicyStatement({
      actions: ['dynamodb:GetItem'],
      resources: [on.table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': INTAKE_READS.partitionKeyPrefixes.map((prefix) => `${prefix}*`) },
        // As the IAM User Guide's "Allows access to specific attributes": a read without a projection asks for every attribute and is refused.
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...INTAKE_READS.attributes] },
        StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
      },
    }),
  );
  role.addToPolicy(
    new PolicyStatement({
      actions: WRITE_ACTIONS,
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': INTAKE_WRITES } },
    }),
  );
  role.addToPolicy(putEventsOf(on.bus, INTAKE_PUBLISHES));
}

function grantPipeline(role: Role, on: Grantees): void {
  const stack = Stack.of(role);
  role.addToPolicy(
    new PolicyStatement({ actions: READ_ACTIONS, resources: [on.table.tableArn, ...on.indexNames.map((index) => `${on.table.tableArn}/index/${index}`)] }),
  );
  role.addToPolicy(new PolicyStatement({ actions: WRITE_ACTIONS, resources: [on.table.tableArn] }));
  role.addToPolicy(
    new PolicyStatement({
      actions: ['dynamodb:DeleteItem'],
      resources: [on.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': PIPELINE_DELETES } },
    }),
  );
  role.addToPolicy(putEventsOf(on.bus, PIPELINE_PUBLISHES));

  const schedules = schedulesArn(stack, on.scheduleGroupName);
  role.addToPolicy(new PolicyStatement({ actions: ['scheduler:CreateSchedule', 'scheduler:DeleteSchedule'], resources: [schedules] }));
  acknowledgeWildcardResource(
    role,
    schedules,
    "Schedule names are made at run time, one per incident and attempt; the wildcard covers only the schedules of this construct's own group.",
  );
  role.addToPolicy(
    new PolicyStatement({
      actions: ['iam:PassRole'],
      resources: [on.schedulerRole.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
    }),
  );
  role.addToPolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [on.shortWaitQueue.queueArn] }));

  // Each step reads its incident's cluster from the directory, and an entry comes with its
  // secrets, all under one pattern: the etcd TLS credentials and the clusters' kubeconfigs.
  role.addToPolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [on.secretArnPattern] }));
  if (on.secretArnPattern.includes('*')) {
    acknowledgeWildcardResource(
      role,
      on.secretArnPattern,
      'Each registered cluster names its own secret (etcd client certificate, kubeconfig) under this prefix, and Secrets Manager adds a random suffix to every secret ARN; read-only, GetSecretValue only.',
    );
  }
}

/**
 * remediate writes the snapshot it takes before a removal, under the bucket's snapshot prefix, and
 * nothing else: s3:PutObject covers CreateMultipartUpload, UploadPart and CompleteMultipartUpload
 * (S3 User Guide, "Multipart upload API and permissions"); AbortMultipartUpload drops the parts of
 * a stream etcd cut short. No read, no list, no delete: a remediator cannot lose a snapshot.
 */
export function grantSnapshots(role: Role, bucket: IBucket): void {
  const objects = bucket.arnForObjects(`${SNAPSHOT_PREFIX}*`);
  role.addToPolicy(new PolicyStatement({ actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: [objects] }));
  acknowledgeWildcardResource(
    role,
    objects,
    "Object keys are made at run time, one per cluster, incident and member; the wildcard covers only the snapshot prefix of this construct's own bucket, for writes.",
  );
}
