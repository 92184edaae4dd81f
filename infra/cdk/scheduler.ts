// Long waits (a minute or more): one-time EventBridge Scheduler schedules in our own group, which
// put RetryDue on the bus through a role that can do nothing else.
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { putEventsOf, SCHEDULED_DETAIL_TYPES, servicePrincipalFor } from './permissions.ts';
import { deadLetterQueue, type DeadLetterQueue } from './queues.ts';

export interface LongWaitsProps {
  readonly bus: IEventBus;
  readonly deadLetterQueues: DeadLetterQueue[];
}

export class LongWaits extends Construct {
  readonly group: ScheduleGroup;
  /** Scheduler assumes it to put the event on the bus, or else the event in the DLQ. */
  readonly role: Role;
  /** Where Scheduler puts an event it could not deliver after its retries. */
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: LongWaitsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // Schedules delete themselves after firing; those still pending go with the group.
    this.group = new ScheduleGroup(this, 'Group', { removalPolicy: RemovalPolicy.DESTROY });
    this.deadLetterQueue = deadLetterQueue(this, 'DeadLetters', 'scheduler: RetryDue events that could not be put on the bus', props.deadLetterQueues);
    this.role = new Role(this, 'Role', {
      description: 'EventBridge Scheduler: puts RetryDue on the etcd-remediator bus',
      // Only Scheduler, acting for this account's schedule group.
      assumedBy: servicePrincipalFor(
        'scheduler.amazonaws.com',
        stack,
        stack.formatArn({ service: 'scheduler', resource: 'schedule-group', resourceName: this.group.scheduleGroupName }),
      ),
    });
    this.role.addToPolicy(putEventsOf(props.bus, SCHEDULED_DETAIL_TYPES));
    this.role.addToPolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.deadLetterQueue.queueArn] }));
  }
}
