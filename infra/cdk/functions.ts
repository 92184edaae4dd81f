// One Lambda function of the construct: bundled from functions/<name>/lambda.ts, its own role
// (no managed policy: log writing is granted on its own log group), its own log group, and where
// an invocation that failed every try goes: a dead-letter queue, or for a pipeline step the
// step-failed function.
import { ArnFormat, Duration, Names, Stack } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { ManagedPolicy, Role } from 'aws-cdk-lib/aws-iam';
import { Architecture, RecursiveLoop, Runtime, type IDestination } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { bundlingOptions } from './bundling.ts';
import { functionSpecs, pascal, type StackFunctionName } from './function-specs.ts';
import { acknowledge } from './nag.ts';
import { servicePrincipalFor } from './permissions.ts';
import { lambdaEntry, lockFile, repoRoot } from './repo-paths.ts';
import { deadLetterQueue, type DeadLetterQueue } from './queues.ts';

export interface RemediatorFunctionProps {
  readonly name: StackFunctionName;
  readonly environment: Record<string, string>;
  readonly logRetention: RetentionDays;
  readonly vpc?: IVpc;
  readonly vpcSubnets?: SubnetSelection;
  readonly securityGroups?: ISecurityGroup[];
  readonly deadLetterQueues: DeadLetterQueue[];
  /** Where an invocation that failed every try goes; a dead-letter queue of its own when unset. */
  readonly onFailure?: IDestination;
  /** The execution role trusts Lambda only as this function (aws:SourceArn) too: EtcdRemediationProps.executionRoleSourceArn. */
  readonly executionRoleSourceArn?: boolean;
}

export class RemediatorFunction extends Construct {
  readonly name: StackFunctionName;
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: RemediatorFunctionProps) {
    super(scope, id);
    const { name } = props;
    const spec = functionSpecs[name];
    this.name = name;
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention });
    // The role trusts Lambda in this account (aws:SourceAccount, as Lambda's Developer Guide gives
    // it for an execution role), and, with executionRoleSourceArn, only as this function
    // (aws:SourceArn): Lambda documents that key for the requests it makes with the role, not for
    // assuming it, and a condition it never meets would fail every function's creation. The ARN is
    // built from a name fixed at synth (unique to the stack and construct path), not read from the
    // function: that attribute would make the role depend on the function, which depends on its
    // role. A fixed name forbids only a replacement, which CloudFormation makes of a function only
    // on a change of name or package type, and this construct changes neither.
    const functionName = Names.uniqueResourceName(this, { maxLength: 64 });
    const stack = Stack.of(this);
    this.role = new Role(this, 'Role', {
      assumedBy: servicePrincipalFor(
        'lambda.amazonaws.com',
        stack,
        props.executionRoleSourceArn
          ? stack.formatArn({ service: 'lambda', resource: 'function', resourceName: functionName, arnFormat: ArnFormat.COLON_RESOURCE_NAME })
          : undefined,
      ),
      description: `etcd-remediator ${name}`,
    });
    this.logGroup.grantWrite(this.role);
    if (props.vpc) {
      this.role.addManagedPolicy(ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));
      acknowledge(
        this.role,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
        "AWS's policy for attaching a function to a VPC: the network-interface actions Lambda calls when it places the function in the subnets; ec2:Describe* cannot be scoped to a resource.",
      );
    }
    const onFailure =
      props.onFailure ?? new SqsDestination(deadLetterQueue(this, 'FailedInvocations', `${name}: invocations that failed every try`, props.deadLetterQueues));
    this.function = new NodejsFunction(this, 'Function', {
      functionName,
      description: `etcd-remediator ${name}`,
      entry: lambdaEntry(name),
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: lockFile,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      bundling: bundlingOptions(lambdaEntry(name)),
      role: this.role,
      logGroup: this.logGroup,
      timeout: spec.timeout,
      memorySize: spec.memorySize,
      environment: props.environment,
      // EventBridge invokes asynchronously: two more tries, then the invocation record goes on.
      retryAttempts: 2,
      maxEventAge: Duration.hours(1),
      onFailure,
      // The pipeline is a loop by design (RetryRequested → … → RetryDue → probe-members, up to
      // once a second while evidence or a grace window is awaited), bounded by the incident's
      // attempt budget and deadline. Lambda's loop detection would stop it after ~16 rounds.
      recursiveLoop: spec.pipeline ? RecursiveLoop.ALLOW : RecursiveLoop.TERMINATE,
      ...(props.vpc ? { vpc: props.vpc, vpcSubnets: props.vpcSubnets, securityGroups: props.securityGroups } : {}),
    });
  }
}

/** The construct id of a function, `ProbeMembers` for probe-members. */
export const functionId = (name: StackFunctionName): string => pascal(name);
