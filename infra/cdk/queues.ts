// Every SQS queue of the construct: encrypted, TLS only. Dead-letter queues keep messages for the
// longest SQS allows and are listed, so each gets a depth alarm and a line on the dashboard.
import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { acknowledge } from './nag.ts';

export interface DeadLetterQueue {
  /** Says in the alarm and on the dashboard what lands here. */
  readonly label: string;
  readonly queue: Queue;
}

export const queueDefaults = {
  // SQS-managed keys: EventBridge, Scheduler and Lambda can all send to the queue without a key policy.
  encryption: QueueEncryption.SQS_MANAGED,
  enforceSSL: true,
} satisfies QueueProps;

/** A dead-letter queue, recorded in `registry` for alarms and the dashboard. */
export function deadLetterQueue(scope: Construct, id: string, label: string, registry: DeadLetterQueue[]): Queue {
  const queue = new Queue(scope, id, { ...queueDefaults, retentionPeriod: Duration.days(14) });
  acknowledge(
    queue,
    'AwsSolutions-SQS3',
    `This queue is itself a dead-letter queue (${label}); its messages are inspected and redriven by hand, and an alarm fires on its depth.`,
  );
  registry.push({ label, queue });
  return queue;
}
