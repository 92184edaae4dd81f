// Alarms and a dashboard. An alarm on every dead-letter queue (anything in one is work that did not
// happen), on blocked remediations and on replacements overdue (a person must act); the dashboard shows outcomes, functions
// and queues on one page.
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TreatMissingData,
  type IAlarmAction,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { MAINTENANCE_RUNS, METRICS_NAMESPACE } from '../../functions/core/incident/index.ts';
import { pipelineFunctionNames, type StackFunctionName } from './function-specs.ts';
import type { DeadLetterQueue } from './queues.ts';
import { REPLACEMENT_OVERDUE } from '../../functions/lambda/outcome-metrics.ts';

export interface MonitoringProps {
  readonly deadLetterQueues: readonly DeadLetterQueue[];
  readonly functions: Record<StackFunctionName, IFunction>;
  readonly alarmActions: ReadonlyArray<string | IAlarmAction>;
}

/** A Powertools metric of ours, as one function (its `service` dimension) wrote it. */
const outcome = (metricName: string, service: string): Metric =>
  new Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service }, statistic: 'Sum', period: Duration.minutes(5) });

/** One metric summed over every pipeline function: any of them may publish any outcome from an outbox. */
const summed = (metricName: string): MathExpression => {
  // Ids are unique across a graph that shows several of these.
  const id = (i: number) => `${metricName.toLowerCase()}${i}`;
  return new MathExpression({
    label: metricName,
    expression: pipelineFunctionNames.map((_, i) => `FILL(${id(i)}, 0)`).join(' + '),
    usingMetrics: Object.fromEntries(pipelineFunctionNames.map((service, i) => [id(i), outcome(metricName, service)])),
    period: Duration.minutes(5),
  });
};

export class Monitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const actions = props.alarmActions.map((action, i) =>
      typeof action === 'string' ? new SnsAction(Topic.fromTopicArn(this, `AlarmTopic${i}`, action)) : action,
    );
    const depths = props.deadLetterQueues.map(({ label, queue }) => ({
      // The queue's place in the construct, e.g. ProbeMembersFailedInvocations: stable and unique.
      id: queue.node.path.split('/').slice(-2).join(''),
      label,
      metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) }),
    }));
    depths.forEach(({ id, label, metric }) => {
      this.alarm(`${id}Depth`, metric, `etcd-remediator dead letters: ${label}. Inspect the messages, fix the cause, then redrive or purge.`, actions);
    });
    const blocked = summed('RemediationBlocked');
    this.alarm(
      'RemediationBlocked',
      blocked,
      'etcd-remediator blocked a remediation: a person must act. The incident says which member, why and what to do (etcd-remediator status, or the RemediationBlocked event).',
      actions,
    );
    this.alarm(
      REPLACEMENT_OVERDUE,
      summed(REPLACEMENT_OVERDUE),
      "etcd-remediator removed a member and no replacement joined within the policy's replacement.windowMs: the cluster is short. Check the replacement Machine and its kubeadm join; the ReplacementOverdue event names the member, when it was removed and what the cluster has now.",
      actions,
    );
    // Maintenance runs only in remediate (it hosts maintain): a run that failed is a person's to look at.
    const maintenanceRuns = (outcome: string): Metric =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: MAINTENANCE_RUNS,
        dimensionsMap: { service: 'remediate', outcome },
        statistic: 'Sum',
        period: Duration.minutes(5),
      });
    this.alarm(
      'MaintenanceFailed',
      maintenanceRuns('failed'),
      'etcd-remediator: a maintenance run failed (a step failed three times, or etcd still refused writes for space after every member was defragmented and the alarm disarmed). The MaintenanceEnded event says which step and why; a removal waiting on a NOSPACE it could not clear blocks, saying what to do.',
      actions,
    );

    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }));
    this.dashboard.addWidgets(
      graph(
        'Outcomes',
        [
          'RemediationCompleted',
          'RemediationReplaced',
          REPLACEMENT_OVERDUE,
          'RemediationBlocked',
          'RemediationClosed',
          'RemediationFailed',
          'LeaderMoved',
          'RetryRequested',
        ].map(summed),
      ),
      graph(
        'Time to remediate (ms)',
        ['p50', 'max'].map((statistic) => summedTime(statistic)),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Maintenance runs',
        ['done', 'waiting', 'blocked', 'failed'].map((o) => maintenanceRuns(o).with({ label: `maintenance ${o}` })),
        24,
      ),
    );
    const fns = Object.entries(props.functions) as [StackFunctionName, IFunction][];
    this.dashboard.addWidgets(
      graph(
        'Invocations',
        fns.map(([name, fn]) => fn.metricInvocations({ label: name, period: Duration.minutes(5) })),
      ),
      graph(
        'Errors',
        fns.map(([name, fn]) => fn.metricErrors({ label: name, period: Duration.minutes(5) })),
      ),
      graph(
        'Duration p99 (ms)',
        fns.map(([name, fn]) => fn.metricDuration({ label: name, statistic: 'p99', period: Duration.minutes(5) })),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Dead-letter queue depth',
        depths.map(({ label, metric }) => metric.with({ label })),
        24,
      ),
    );
  }

  private alarm(id: string, metric: IMetric, description: string, actions: IAlarmAction[]): void {
    const alarm = new Alarm(this, id, {
      metric,
      alarmDescription: description,
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    if (actions.length > 0) alarm.addAlarmAction(...actions);
    this.alarms.push(alarm);
  }
}

/** Time to remediate is written by whichever function published RemediationCompleted. */
const summedTime = (statistic: string): MathExpression =>
  new MathExpression({
    label: `TimeToRemediate ${statistic}`,
    expression: `MAX([${pipelineFunctionNames.map((_, i) => `t${statistic}${i}`).join(', ')}])`,
    usingMetrics: Object.fromEntries(
      pipelineFunctionNames.map((service, i) => [
        `t${statistic}${i}`,
        new Metric({ namespace: METRICS_NAMESPACE, metricName: 'TimeToRemediate', dimensionsMap: { service }, statistic, period: Duration.minutes(5) }),
      ]),
    ),
    period: Duration.minutes(5),
  });

const graph = (title: string, left: IMetric[], width = 12): GraphWidget => new GraphWidget({ title, left, width, height: 6 });
