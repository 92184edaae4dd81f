// What a user can set when dropping EtcdRemediation into their own stack.
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { PolicyInput } from '../../functions/core/policy/index.ts';

export interface EtcdRemediationProps {
  /**
   * Place the functions in this VPC, so they reach etcd client URLs on private addresses. The
   * subnets need a route to DynamoDB, EventBridge, Scheduler, SQS and Secrets Manager (NAT or
   * VPC endpoints). Default: no VPC.
   */
  readonly vpc?: IVpc;
  /** Default: the VPC's private subnets with egress. Only with `vpc`. */
  readonly vpcSubnets?: SubnetSelection;
  /** Security groups that etcd's client port admits. Default: one new group per function. Only with `vpc`. */
  readonly securityGroups?: ISecurityGroup[];
  /**
   * Policy defaults for every cluster (grace window, backoff, KCP limits…); a cluster's own
   * policy in the directory overrides them. Checked at synth; handed to the functions as JSON in
   * POLICY_DEFAULTS. Default: the built-in defaults.
   */
  readonly policyDefaults?: PolicyInput;
  /** Where alarms go: SNS topic ARNs, or any CloudWatch alarm action. Default: none. */
  readonly alarmActions?: ReadonlyArray<string | IAlarmAction>;
  /** How long the functions' logs are kept. Default: one month. */
  readonly logRetention?: RetentionDays;
  /** What happens to the incident table when the construct is removed. Default: RETAIN. */
  readonly tableRemovalPolicy?: RemovalPolicy;
  /**
   * The secrets a cluster's registration names (etcd client certificates, the workload and
   * management clusters' kubeconfigs) that the functions may read, as an ARN pattern. Default:
   * secrets named `etcd-remediator/*` in this account and region.
   */
  readonly secretArnPattern?: string;
  /** How many days a snapshot taken before a removal is kept in the construct's bucket. Default: 30. */
  readonly snapshotRetentionDays?: number;
  /**
   * Also require, in each function's execution-role trust policy, that Lambda assumes it as that
   * function (`aws:SourceArn`, its own ARN), beside `aws:SourceAccount`. Off by default: Lambda's
   * documentation gives `aws:SourceAccount` for an execution role's trust and documents
   * `aws:SourceArn` for the requests it makes with the role, not for assuming it; if it does not
   * send the key, every function fails to create and the stack rolls back. Turn it on where a test
   * deployment has shown that it does. Default: false.
   */
  readonly executionRoleSourceArn?: boolean;
}
