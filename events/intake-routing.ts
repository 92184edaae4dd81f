// Which outside events reach the intake function: EventBridge patterns as data, for the CDK rules
// and the tests to read, as the catalogue's routes are for our own events. AWS service events
// arrive on the account's default bus; reports from other tools come on ours with their own source.
import { ALARM_STATE_CHANGE, EC2_STATE_CHANGE, HEALTH_EVENT, STATUS_CHECK_METRICS, UNHEALTHY_EC2_STATES } from '../functions/core/intake/index.ts';

/** The source a tool (a MachineHealthCheck bridge, a script) gives a MemberUnhealthy meant for the intake. */
export const INTAKE_REPORT_SOURCE = 'etcd-remediator.intake';

export interface IntakePattern {
  /** Which bus the rule goes on. */
  bus: 'default' | 'remediation';
  pattern: Record<string, unknown>;
}

/** Only equality matching (arrays of values, nested objects), so any fake that routes by rules takes them. */
export const intakePatterns: readonly IntakePattern[] = [
  { bus: 'default', pattern: { source: ['aws.ec2'], 'detail-type': [EC2_STATE_CHANGE], detail: { state: [...UNHEALTHY_EC2_STATES] } } },
  {
    bus: 'default',
    pattern: {
      source: ['aws.cloudwatch'],
      'detail-type': [ALARM_STATE_CHANGE],
      // Matches when any of the alarm's metrics is a status check of AWS/EC2.
      detail: {
        state: { value: ['ALARM'] },
        configuration: { metrics: { metricStat: { metric: { namespace: ['AWS/EC2'], name: [...STATUS_CHECK_METRICS] } } } },
      },
    },
  },
  { bus: 'default', pattern: { source: ['aws.health'], 'detail-type': [HEALTH_EVENT] } },
  { bus: 'remediation', pattern: { source: [INTAKE_REPORT_SOURCE], 'detail-type': ['MemberUnhealthy'] } },
];
