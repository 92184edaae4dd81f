// The stack `npm run synth` writes: one EtcdRemediation and the names a user needs to send events.
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { EtcdRemediation, type EtcdRemediationProps } from './etcd-remediation.ts';
import { alarmActionsOf, type DeployContext } from './deploy-context.ts';
import { networkProps, type NetworkContext } from './network-context.ts';

export interface EtcdRemediatorStackProps extends StackProps {
  readonly remediation?: EtcdRemediationProps;
  /** The VPC, subnets and security group from the app's context; made into the construct's network props in this stack. */
  readonly network?: NetworkContext;
  /** From the app's context: who hears the alarms (an SNS topic given, or one made for an email address), and the trust's aws:SourceArn. */
  readonly deploy?: DeployContext;
}

export class EtcdRemediatorStack extends Stack {
  readonly remediation: EtcdRemediation;

  constructor(scope: Construct, id: string, props: EtcdRemediatorStackProps = {}) {
    super(scope, id, props);
    const network = props.network ? networkProps(this, props.network) : {};
    const alarmed = props.deploy ? alarmActionsOf(this, props.deploy) : [];
    this.remediation = new EtcdRemediation(this, 'Remediation', {
      ...props.remediation,
      ...network,
      ...(alarmed.length > 0 ? { alarmActions: [...(props.remediation?.alarmActions ?? []), ...alarmed] } : {}),
      ...(props.deploy?.executionRoleSourceArn ? { executionRoleSourceArn: true } : {}),
    });
    new CfnOutput(this, 'BusName', { value: this.remediation.bus.eventBusName, description: 'etcd-remediator send --bus NAME' });
    new CfnOutput(this, 'TableName', { value: this.remediation.table.tableName, description: 'Incidents and the cluster directory' });
    new CfnOutput(this, 'DashboardName', { value: this.remediation.monitoring.dashboard.dashboardName });
  }
}
