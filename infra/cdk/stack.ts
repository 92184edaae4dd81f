// The stack `npm run synth` writes: one EtcdRemediation and the names a user needs to send events.
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { EtcdRemediation, type EtcdRemediationProps } from './etcd-remediation.ts';
import { networkProps, type NetworkContext } from './network-context.ts';

export interface EtcdRemediatorStackProps extends StackProps {
  readonly remediation?: EtcdRemediationProps;
  /** The VPC, subnets and security group from the app's context; made into the construct's network props in this stack. */
  readonly network?: NetworkContext;
}

export class EtcdRemediatorStack extends Stack {
  readonly remediation: EtcdRemediation;

  constructor(scope: Construct, id: string, props: EtcdRemediatorStackProps = {}) {
    super(scope, id, props);
    const network = props.network ? networkProps(this, props.network) : {};
    this.remediation = new EtcdRemediation(this, 'Remediation', { ...props.remediation, ...network });
    new CfnOutput(this, 'BusName', { value: this.remediation.bus.eventBusName, description: 'etcd-remediator send --bus NAME' });
    new CfnOutput(this, 'TableName', { value: this.remediation.table.tableName, description: 'Incidents and the cluster directory' });
    new CfnOutput(this, 'DashboardName', { value: this.remediation.monitoring.dashboard.dashboardName });
  }
}
