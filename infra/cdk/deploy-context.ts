// The deployment's choices from CDK context, beside the network's (network-context.ts): who hears
// the alarms, `-c alarmTopicArn=arn:aws:sns:…` (an SNS topic you own) or `-c alarmEmail=you@example.com`
// (a topic the stack makes, that address subscribed: AWS mails it a confirmation to accept first),
// or both; and `-c executionRoleSourceArn=true` (EtcdRemediationProps.executionRoleSourceArn).
// Checked as plain data first, so a typo is one line naming the key; with no alarm target, the
// alarms notify no one, and synth says so.
import { Annotations, type Stack } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { ContextError } from './network-context.ts';

export const DEPLOY_CONTEXT_KEYS = ['alarmTopicArn', 'alarmEmail', 'executionRoleSourceArn'] as const;

export interface DeployContext {
  readonly alarmTopicArn?: string;
  readonly alarmEmail?: string;
  readonly executionRoleSourceArn?: boolean;
}

/** An SNS topic's ARN: partition, region, 12-digit account, a name of letters, digits, - and _ (a FIFO topic's .fifo too). */
const TOPIC_ARN = /^arn:aws(-[a-z]+)*:sns:[a-z]{2}(-[a-z]+)+-\d:\d{12}:[A-Za-z0-9_-]{1,251}(\.fifo)?$/;
/** What SNS's email protocol takes: one address, no display name. */
const EMAIL = /^[^\s@<>,;]+@[^\s@<>,;]+\.[^\s@<>,;]+$/;

/** The alarm context, checked; keys not given are left out. */
export function deployContextOf(read: (key: string) => unknown): DeployContext {
  const given = (key: (typeof DEPLOY_CONTEXT_KEYS)[number]) => {
    const value = read(key);
    return value === undefined || value === '' ? undefined : value;
  };
  const [topic, email, pinned] = DEPLOY_CONTEXT_KEYS.map(given);
  if (topic !== undefined && (typeof topic !== 'string' || !TOPIC_ARN.test(topic.trim())))
    throw new ContextError('alarmTopicArn', `${JSON.stringify(topic)} is not an SNS topic ARN (like arn:aws:sns:eu-west-1:123456789012:oncall)`);
  if (email !== undefined && (typeof email !== 'string' || !EMAIL.test(email.trim())))
    throw new ContextError('alarmEmail', `${JSON.stringify(email)} is not one email address (like oncall@example.com)`);
  if (pinned !== undefined && pinned !== true && pinned !== 'true' && pinned !== false && pinned !== 'false')
    throw new ContextError('executionRoleSourceArn', `expected true or false, got ${JSON.stringify(pinned)}`);
  return {
    ...(typeof topic === 'string' ? { alarmTopicArn: topic.trim() } : {}),
    ...(typeof email === 'string' ? { alarmEmail: email.trim() } : {}),
    ...(pinned === true || pinned === 'true' ? { executionRoleSourceArn: true } : {}),
  };
}

/** The alarm actions the context asks for, made in `stack`; none said as a warning at synth. */
export function alarmActionsOf(stack: Stack, context: DeployContext): IAlarmAction[] {
  const actions: IAlarmAction[] = [];
  if (context.alarmTopicArn) actions.push(new SnsAction(Topic.fromTopicArn(stack, 'AlarmTopicGiven', context.alarmTopicArn)));
  if (context.alarmEmail) {
    // Not encrypted at rest: CloudWatch cannot publish to a topic under the AWS-managed SNS key, a
    // key of our own would need a key policy for cloudwatch.amazonaws.com, and an alarm's message
    // carries no secret (the alarm's name, state and reason). Give alarmTopicArn for a topic of your own.
    const topic = new Topic(stack, 'AlarmTopic', { displayName: 'etcd-remediator alarms', enforceSSL: true });
    topic.addSubscription(new EmailSubscription(context.alarmEmail));
    actions.push(new SnsAction(topic));
  }
  if (actions.length === 0)
    Annotations.of(stack).addWarningV2(
      'etcd-remediator:alarmsNotifyNoOne',
      'the alarms notify no one: give -c alarmTopicArn=arn:aws:sns:… or -c alarmEmail=you@example.com',
    );
  return actions;
}
