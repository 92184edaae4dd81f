// EtcdRemediation: the whole AWS side in one construct a user can drop into their own stack. The
// bus and its rules (from the catalogue), six functions, long and short waits, the table, alarms
// and a dashboard. Each part lives in its own file beside this one.
import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { IDestination, IFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { checkPolicyDefaults, PolicyDefaultsError } from '../../functions/adapters/aws/policy-defaults.ts';
import type { PolicyInput } from '../../functions/core/policy/index.ts';
import { Monitoring } from './alarms.ts';
import { SECRET_NAME_PREFIX } from '../../functions/adapters/aws/secrets.ts';
import { METRICS_NAMESPACE } from '../../functions/core/incident/index.ts';
import { isStep, pascal, stackFunctionNames, type StackFunctionName } from './function-specs.ts';
import { RemediatorFunction } from './functions.ts';
import { grantFunction, grantSnapshots } from './permissions.ts';
import type { EtcdRemediationProps } from './props.ts';
import type { DeadLetterQueue } from './queues.ts';
import { Routing } from './rules.ts';
import { StepFailedDestination } from './step-failed.ts';
import { LongWaits } from './scheduler.ts';
import { ShortWaits } from './short-wait-pipe.ts';
import { snapshotBucket } from './snapshot-bucket.ts';
import { indexNames, remediationTable } from './table.ts';

export type { EtcdRemediationProps } from './props.ts';

export class EtcdRemediation extends Construct {
  readonly bus: EventBus;
  readonly table: Table;
  readonly functions: Record<StackFunctionName, RemediatorFunction>;
  readonly longWaits: LongWaits;
  readonly shortWaits: ShortWaits;
  readonly routing: Routing;
  readonly monitoring: Monitoring;
  /** Where remediate puts the snapshot it takes before each removal. */
  readonly snapshots: Bucket;
  /** Every dead-letter queue, each with what lands in it. */
  readonly deadLetterQueues: DeadLetterQueue[] = [];

  constructor(scope: Construct, id: string, props: EtcdRemediationProps = {}) {
    super(scope, id);
    if (!props.vpc && (props.vpcSubnets || props.securityGroups)) {
      throw new Error('EtcdRemediation: vpcSubnets and securityGroups need vpc');
    }
    const policyDefaults = JSON.stringify(checkedDefaults(props.policyDefaults ?? {}));

    const stack = Stack.of(this);
    this.bus = new EventBus(this, 'Bus', { description: 'etcd-remediator: incidents, probes, retries and outcomes' });
    this.table = remediationTable(this, 'Table', props.tableRemovalPolicy ?? RemovalPolicy.RETAIN);
    this.longWaits = new LongWaits(this, 'LongWaits', { bus: this.bus, deadLetterQueues: this.deadLetterQueues });
    this.shortWaits = new ShortWaits(this, 'ShortWaits', { bus: this.bus, deadLetterQueues: this.deadLetterQueues });
    this.snapshots = snapshotBucket(this, 'Snapshots', props.snapshotRetentionDays);

    const sharedEnvironment = {
      TABLE_NAME: this.table.tableName,
      BUS_NAME: this.bus.eventBusName,
      BUS_ARN: this.bus.eventBusArn,
      SCHEDULE_GROUP: this.longWaits.group.scheduleGroupName,
      SCHEDULER_ROLE_ARN: this.longWaits.role.roleArn,
      SCHEDULER_DLQ_ARN: this.longWaits.deadLetterQueue.queueArn,
      SHORT_WAIT_QUEUE_URL: this.shortWaits.queue.queueUrl,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      POLICY_DEFAULTS: policyDefaults,
      NODE_OPTIONS: '--enable-source-maps',
    };
    const grantees = {
      table: this.table,
      indexNames,
      bus: this.bus,
      scheduleGroupName: this.longWaits.group.scheduleGroupName,
      schedulerRole: this.longWaits.role,
      shortWaitQueue: this.shortWaits.queue,
      secretArnPattern:
        props.secretArnPattern ??
        stack.formatArn({ service: 'secretsmanager', resource: 'secret', resourceName: `${SECRET_NAME_PREFIX}*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
    };

    const functions = {} as Record<StackFunctionName, RemediatorFunction>;
    const lambdas = {} as Record<StackFunctionName, IFunction>;
    const build = (name: StackFunctionName, onFailure?: IDestination): RemediatorFunction => {
      const fn = new RemediatorFunction(this, pascal(name), {
        name,
        environment: { ...sharedEnvironment, POWERTOOLS_SERVICE_NAME: name, ...(name === 'remediate' ? { SNAPSHOT_BUCKET: this.snapshots.bucketName } : {}) },
        logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
        vpc: props.vpc,
        vpcSubnets: props.vpcSubnets,
        securityGroups: props.securityGroups,
        deadLetterQueues: this.deadLetterQueues,
        ...(onFailure ? { onFailure } : {}),
        ...(props.executionRoleSourceArn ? { executionRoleSourceArn: true } : {}),
      });
      grantFunction(name, fn.role, grantees);
      if (name === 'remediate') grantSnapshots(fn.role, this.snapshots);
      functions[name] = fn;
      lambdas[name] = fn.function;
      return fn;
    };
    // A step that failed every try ends in step-failed, which resumes or blocks its incident, as
    // the local runtime does; step-failed and the intake keep a dead-letter queue of their own.
    const stepFailed = new StepFailedDestination(build('step-failed').function);
    for (const name of stackFunctionNames) if (name !== 'step-failed') build(name, isStep(name) ? stepFailed : undefined);
    this.functions = functions;

    this.routing = new Routing(this, 'Routing', { bus: this.bus, functions: lambdas, deadLetterQueues: this.deadLetterQueues });
    this.monitoring = new Monitoring(this, 'Monitoring', {
      deadLetterQueues: this.deadLetterQueues,
      functions: lambdas,
      alarmActions: props.alarmActions ?? [],
    });
  }
}

/**
 * The check a cold start makes of POLICY_DEFAULTS, made at synth: a bad field (an unknown one at
 * any depth too) fails synth, naming it, not every function's first incident.
 */
function checkedDefaults(defaults: unknown): PolicyInput {
  try {
    return checkPolicyDefaults(defaults);
  } catch (error) {
    if (error instanceof PolicyDefaultsError)
      throw new Error(`EtcdRemediation: policyDefaults${error.field ? `.${error.field}` : ''}: ${error.problem}`, { cause: error });
    throw error;
  }
}
