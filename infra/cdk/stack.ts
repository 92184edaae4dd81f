// The stack `npm run synth` writes: one EtcdRemediation and the names a user needs to send events.
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { EtcdRemediation, type EtcdRemediationProps } from './etcd-remediation.ts';

export interface EtcdRemediatorStackProps extends StackProps {
  readonly remediation?: EtcdRemediationProps;
}

export class EtcdRemediatorStack extends Stack {
  readonly remediation: EtcdRemediation;

  constructor(scope: Construct, id: string, props: EtcdRemediatorStackProps = {}) {
    super(scope, id, props);
    this.remediation = new EtcdRemediation(this, 'Remediation', props.remediation);
    new CfnOutput(this, 'BusName', { value: this.remediation.bus.eventBusName, description: 'etcd-remediator send --bus NAME' });
    new CfnOutput(this, 'TableName', { value: this.remediation.table.tableName, description: 'Incidents and the cluster directory' });
    new CfnOutput(this, 'DashboardName', { value: this.remediation.monitoring.dashboard.dashboardName });
  }
}
