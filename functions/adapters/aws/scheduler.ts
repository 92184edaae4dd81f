// The scheduler port on AWS: waits of a minute or more are one-time EventBridge Scheduler
// schedules that put the event on the bus; shorter ones go through the short-wait queue and its
// Pipe (see short-wait.ts), because Scheduler may fire up to a minute late.
import { CreateScheduleCommand, DeleteScheduleCommand, type CreateScheduleCommandInput, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { setTimeout as sleep } from 'node:timers/promises';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { EVENT_SOURCE } from '../../../events/catalogue.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ScheduleRequest, Scheduler } from '../../ports/scheduler.ts';
import { scheduleName } from './schedule-name.ts';
import { shortWaitMessage } from './short-wait-queue.ts';

export interface AwsSchedulerOptions {
  scheduler: SchedulerClient;
  sqs: SQSClient;
  groupName: string;
  busArn: string;
  /** The role Scheduler assumes to put the event on the bus. */
  roleArn: string;
  /** Where Scheduler sends an event it could not put on the bus. */
  dlqArn: string;
  shortWaitQueueUrl: string;
  clock: Clock;
}

/** Waits at least this long go to Scheduler. */
export const MIN_SCHEDULER_WAIT_MS = 60_000;
/** Slack for the time the request takes to reach Scheduler, so a 60 s wait is not 59.9 s there. */
const TRANSIT_MARGIN_MS = 1_000;
/**
 * A RetryDue that cannot reach the bus for 15 minutes goes to the DLQ: past that the incident's
 * own deadline (30 min) is near and a sweep, not this event, must pick the incident up.
 */
const RETRY_POLICY = { MaximumEventAgeInSeconds: 900, MaximumRetryAttempts: 10 };

/** `at()` takes UTC wall time to the second; rounding up keeps the event from firing early. */
export const atExpression = (at: number): string => `at(${new Date(Math.ceil(at / 1000) * 1000).toISOString().slice(0, 19)})`;

export function scheduleInput(options: AwsSchedulerOptions, request: ScheduleRequest, now: number): CreateScheduleCommandInput {
  const fireAt = Math.max(request.at, now + MIN_SCHEDULER_WAIT_MS + TRANSIT_MARGIN_MS);
  return {
    Name: scheduleName(request.name),
    GroupName: options.groupName,
    Description: request.name.slice(0, 512),
    ScheduleExpression: atExpression(fireAt),
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' },
    ActionAfterCompletion: 'DELETE',
    State: 'ENABLED',
    Target: {
      Arn: options.busArn,
      RoleArn: options.roleArn,
      Input: JSON.stringify(request.event.detail),
      EventBridgeParameters: { DetailType: request.event.detailType, Source: EVENT_SOURCE },
      RetryPolicy: RETRY_POLICY,
      DeadLetterConfig: { Arn: options.dlqArn },
    },
  };
}

const isNamed = (error: unknown, name: string): boolean => error instanceof Error && error.name === name;

export function createAwsScheduler(options: AwsSchedulerOptions): Scheduler {
  const { scheduler, sqs, clock } = options;
  return {
    async schedule(request: ScheduleRequest): Promise<void> {
      const now = clock.now();
      const wait = request.at - now;
      if (wait < MIN_SCHEDULER_WAIT_MS) {
        // SQS delays in whole seconds: the fraction is waited here first (under a second of this
        // invocation), so the evidence rule's and the grace window's waits keep their precision
        // instead of each gaining up to a second.
        const fraction = wait % 1_000;
        if (wait > 0 && fraction > 0) await sleep(fraction);
        await sqs.send(new SendMessageCommand(shortWaitMessage(options.shortWaitQueueUrl, request.event, request.at - clock.now())));
        return;
      }
      try {
        await scheduler.send(new CreateScheduleCommand(scheduleInput(options, request, now)));
      } catch (error) {
        // Names are per incident and attempt, so a schedule of this name is this very retry.
        if (!isNamed(error, 'ConflictException')) throw error;
      }
    },
    async cancel(name: string): Promise<void> {
      // Only long waits can be cancelled; a short wait that fires anyway is skipped as stale.
      try {
        await scheduler.send(new DeleteScheduleCommand({ Name: scheduleName(name), GroupName: options.groupName }));
      } catch (error) {
        if (!isNamed(error, 'ResourceNotFoundException')) throw error;
      }
    },
  };
}
