// Short waits (under a minute; Scheduler may fire up to a minute late): a message with a
// per-message DelaySeconds on a standard queue, carried onto the bus by an EventBridge Pipe as
// RetryDue. The message body is `{"detailType": "RetryDue", "detail": {...}}`
// (functions/adapters/aws/short-wait-queue.ts); the event's detail is the body's detail.
import { ArnFormat, Duration, Names, Stack } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import { CfnPipe } from 'aws-cdk-lib/aws-pipes';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SHORT_WAIT_PIPE } from '../../functions/adapters/aws/short-wait-queue.ts';
import { putEventsOf, SCHEDULED_DETAIL_TYPES, servicePrincipalFor } from './permissions.ts';
import { deadLetterQueue, queueDefaults, type DeadLetterQueue } from './queues.ts';

/**
 * The adapter's contract (functions/adapters/aws/short-wait-queue.ts), as data. DetailType is a literal,
 * not the body's own: whoever may send to the queue can only ever cause a RetryDue. Pipes reads a
 * JSON body as JSON, so the input template yields the body's detail object itself.
 */
const { source, detailType, inputTemplate } = SHORT_WAIT_PIPE;
/**
 * How soon a message the Pipe failed to put on the bus is received again. Its only work is one
 * PutEvents, done in milliseconds; SQS's default of 30 s would make a failed sub-second wait half
 * a minute late.
 */
export const SHORT_WAIT_VISIBILITY_SECONDS = 5;
/** Deliveries to the bus the Pipe may fail before the message goes to the DLQ: about a minute of tries. */
export const SHORT_WAIT_MAX_RECEIVES = 12;

export interface ShortWaitsProps {
  readonly bus: IEventBus;
  readonly deadLetterQueues: DeadLetterQueue[];
}

export class ShortWaits extends Construct {
  readonly queue: Queue;
  readonly pipe: CfnPipe;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: ShortWaitsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const dlq = deadLetterQueue(this, 'DeadLetters', 'short waits the pipe could not put on the bus', props.deadLetterQueues);
    this.queue = new Queue(this, 'Queue', {
      ...queueDefaults,
      // No queue-level delay: each message carries its own DelaySeconds.
      visibilityTimeout: Duration.seconds(SHORT_WAIT_VISIBILITY_SECONDS),
      deadLetterQueue: { queue: dlq, maxReceiveCount: SHORT_WAIT_MAX_RECEIVES },
    });
    // A name fixed at synth, so the role's trust can name the pipe: the pipe's own ARN attribute
    // would make the role depend on the pipe, which depends on the role.
    const pipeName = Names.uniqueResourceName(this, { maxLength: 64 });
    this.role = new Role(this, 'PipeRole', {
      description: 'EventBridge Pipe: short-wait queue to the etcd-remediator bus',
      // Only Pipes, running this very pipe.
      assumedBy: servicePrincipalFor(
        'pipes.amazonaws.com',
        stack,
        stack.formatArn({ service: 'pipes', resource: 'pipe', resourceName: pipeName, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
      ),
    });
    this.role.addToPolicy(
      new PolicyStatement({ actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'], resources: [this.queue.queueArn] }),
    );
    this.role.addToPolicy(putEventsOf(props.bus, SCHEDULED_DETAIL_TYPES));
    this.pipe = new CfnPipe(this, 'Pipe', {
      name: pipeName,
      description: 'etcd-remediator short waits: delayed RetryDue back onto the bus',
      roleArn: this.role.roleArn,
      source: this.queue.queueArn,
      // One message, one event, at once: a failed batch would redeliver the others with it.
      sourceParameters: { sqsQueueParameters: { batchSize: 1, maximumBatchingWindowInSeconds: 0 } },
      target: props.bus.eventBusArn,
      targetParameters: {
        inputTemplate,
        eventBridgeEventBusParameters: { detailType, source },
      },
      desiredState: 'RUNNING',
    });
    // The pipe checks its role's permissions when it is created.
    this.pipe.node.addDependency(this.role);
  }
}
