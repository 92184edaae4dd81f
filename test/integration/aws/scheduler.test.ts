// The AWS scheduler adapter with the real Scheduler and SQS clients against the fakes, on one
// manual clock: a wait of a minute or more is a one-time schedule with exactly the fields the
// design asks for and fires onto the bus; a shorter one is an SQS message with DelaySeconds that
// the Pipe (read from the synthesized template) carries to the bus when its delay is over.
// Scheduler fires within its minute of precision (the fake's default: 30 s after the time).
import { CreateScheduleCommand, GetScheduleCommand, SchedulerClient, type FlexibleTimeWindow } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_SOURCE } from '../../../events/catalogue.ts';
import { createAwsScheduler, type AwsSchedulerOptions } from '../../../functions/adapters/aws/scheduler.ts';
import { scheduleName } from '../../../functions/adapters/aws/schedule-name.ts';
import { manualClock, type ManualClock } from '../../support/manual-clock.ts';
import type { ScheduledEvent, Scheduler } from '../../../functions/ports/scheduler.ts';
import type { EventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import { startEventBridgeFake, type EventBridgeFake } from '../../support/fakes/eventbridge-fake.ts';
import { connectPipe, pipeFromTemplate } from '../../support/fakes/pipe-fake.ts';
import { startSchedulerFake, type SchedulerFake } from '../../support/fakes/scheduler-fake.ts';
import { startSqsFake, type SqsFake } from '../../support/fakes/sqs-fake.ts';
import { loadSample } from '../../unit/events/samples.ts';
import { sdkConfig, synthesize, type SynthesizedStack } from './synth-stack.ts';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const GROUP = 'etcd-remediator';
const QUEUE = 'short-waits';
const ROLE = 'arn:aws:iam::000000000000:role/scheduler';
const DLQ = 'arn:aws:sqs:us-east-1:000000000000:scheduler-dlq';
/** Scheduler's precision: a schedule fires within this long after its time. */
const PRECISION_MS = 60_000;

const retryDue = (attempt: number): ScheduledEvent => ({ detailType: 'RetryDue', detail: { ...loadSample('RetryDue'), attempt } });

describe('AWS scheduler adapter', () => {
  let stack: SynthesizedStack;
  let clock: ManualClock;
  let eventBridge: EventBridgeFake;
  let schedulerFake: SchedulerFake;
  let sqsFake: SqsFake;
  let clients: { scheduler: SchedulerClient; sqs: SQSClient };
  let options: AwsSchedulerOptions;
  let scheduler: Scheduler;
  let probed: EventBridgeEvent[];

  beforeAll(() => {
    stack = synthesize();
  });
  beforeEach(async () => {
    clock = manualClock(T0);
    eventBridge = await startEventBridgeFake({ template: stack.template, clock });
    schedulerFake = await startSchedulerFake({ eventBridge, clock, groups: [GROUP] });
    sqsFake = await startSqsFake({ queues: [QUEUE], clock });
    const pipe = pipeFromTemplate(stack.template);
    expect(pipe.sourceLogicalId).toBe(stack.queueId);
    connectPipe({ sqs: sqsFake, queue: QUEUE, eventBridge, target: pipe });
    clients = { scheduler: new SchedulerClient(sdkConfig(schedulerFake.endpoint)), sqs: new SQSClient(sdkConfig(sqsFake.endpoint)) };
    options = {
      ...clients,
      groupName: GROUP,
      busArn: eventBridge.busArn(stack.busName),
      roleArn: ROLE,
      dlqArn: DLQ,
      shortWaitQueueUrl: sqsFake.queueUrl(QUEUE),
      clock,
    };
    scheduler = createAwsScheduler(options);
    probed = [];
    eventBridge.onTarget(stack.functionIds['probe-members'], (event) => void probed.push(event));
  });
  afterEach(async () => {
    clients.scheduler.destroy();
    clients.sqs.destroy();
    await Promise.all([eventBridge.close(), schedulerFake.close(), sqsFake.close()]);
  });

  /** Moves the clock and lets every fake do what is due, then waits for the deliveries. */
  const advance = async (ms: number) => {
    clock.advance(ms);
    await schedulerFake.runDue();
    await sqsFake.runDue();
    await eventBridge.idle();
  };

  it('a wait of 90 s is one Scheduler schedule with exactly the designed fields', async () => {
    const event = retryDue(3);
    await scheduler.schedule({ name: 'inc-1-retry-3', at: T0 + 90_000, event });
    expect(sqsFake.sent).toHaveLength(0);
    expect(schedulerFake.requests).toEqual([
      {
        operation: 'CreateSchedule',
        name: 'inc-1-retry-3',
        groupName: GROUP,
        body: {
          GroupName: GROUP,
          Description: 'inc-1-retry-3',
          ScheduleExpression: 'at(2030-01-01T00:01:30)',
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          State: 'ENABLED',
          Target: {
            Arn: eventBridge.busArn(stack.busName),
            RoleArn: ROLE,
            Input: JSON.stringify(event.detail),
            EventBridgeParameters: { DetailType: 'RetryDue', Source: EVENT_SOURCE },
            RetryPolicy: { MaximumEventAgeInSeconds: 900, MaximumRetryAttempts: 10 },
            DeadLetterConfig: { Arn: DLQ },
          },
          ClientToken: expect.any(String),
        },
      },
    ]);
    const got = await clients.scheduler.send(new GetScheduleCommand({ Name: 'inc-1-retry-3', GroupName: GROUP }));
    expect(got).toMatchObject({ Name: 'inc-1-retry-3', GroupName: GROUP, ScheduleExpression: 'at(2030-01-01T00:01:30)', ActionAfterCompletion: 'DELETE' });
    expect(got.CreationDate).toEqual(new Date(T0));
  });

  it('the schedule fires within its minute after its time, not before, onto the bus and to probe-members, and is then deleted', async () => {
    const event = retryDue(3);
    await scheduler.schedule({ name: 'inc-1-retry-3', at: T0 + 90_000, event });
    await advance(89_999);
    expect(probed).toHaveLength(0);
    await advance(1);
    // Due, but Scheduler's 60 s precision puts the firing later in the minute.
    expect(probed).toHaveLength(0);
    await advance(PRECISION_MS - 1);
    expect(probed.map((e) => [e['detail-type'], e.source, e.detail])).toEqual([['RetryDue', EVENT_SOURCE, event.detail]]);
    expect(schedulerFake.schedules()).toHaveLength(0);
    expect(schedulerFake.firings.map((f) => f.tries)).toEqual([[{ EventId: expect.any(String) }]]);
  });

  it('rounds at() up to the whole second, and a wait of exactly 60 s still goes to Scheduler', async () => {
    await scheduler.schedule({ name: 'a', at: T0 + 125_001, event: retryDue(1) });
    await scheduler.schedule({ name: 'b', at: T0 + 60_000, event: retryDue(1) });
    expect(schedulerFake.requests.map((r) => r.body.ScheduleExpression)).toEqual(['at(2030-01-01T00:02:06)', 'at(2030-01-01T00:01:01)']);
    expect(sqsFake.sent).toHaveLength(0);
  });

  it.each([
    [-5_000, 0],
    [0, 0],
    [500, 1],
    [2_500, 3],
    [30_000, 30],
    [59_000, 59],
    [59_999, 60],
  ])('a wait of %i ms goes to SQS with DelaySeconds %i', async (wait, delay) => {
    const event = retryDue(2);
    await scheduler.schedule({ name: 'inc-1-retry-2', at: T0 + wait, event });
    expect(schedulerFake.requests).toHaveLength(0);
    expect(sqsFake.sent.map((m) => m.request)).toEqual([
      { QueueUrl: sqsFake.queueUrl(QUEUE), MessageBody: JSON.stringify({ detailType: 'RetryDue', detail: event.detail }), DelaySeconds: delay },
    ]);
  });

  it('refuses a short wait for anything but RetryDue: the Pipe would turn it into one', async () => {
    const approved: ScheduledEvent = { detailType: 'RemediationApproved', detail: loadSample('RemediationApproved') };
    await expect(scheduler.schedule({ name: 'x', at: T0 + 5_000, event: approved })).rejects.toThrow(
      'a RemediationApproved cannot wait under 60 s: the short-wait Pipe puts only RetryDue on the bus',
    );
    expect(sqsFake.sent).toHaveLength(0);
  });

  it('a short wait reaches probe-members through the pipe once its delay is over, not before', async () => {
    const event = retryDue(2);
    await scheduler.schedule({ name: 'inc-1-retry-2', at: T0 + 2_500, event });
    await advance(2_999);
    expect(probed).toHaveLength(0);
    await advance(1);
    expect(probed.map((e) => [e['detail-type'], e.source, e.detail])).toEqual([['RetryDue', EVENT_SOURCE, event.detail]]);
    expect(sqsFake.pending(QUEUE)).toHaveLength(0);
  });

  it('a message the pipe cannot put on the bus stays in the queue and comes back', async () => {
    eventBridge.failEntries({ errorCode: 'InternalFailure' });
    await scheduler.schedule({ name: 'inc-1-retry-2', at: T0 + 1_000, event: retryDue(2) });
    await advance(1_000);
    expect(probed).toHaveLength(0);
    expect(sqsFake.pending(QUEUE)).toHaveLength(1);
    await advance(30_000);
    expect(probed).toHaveLength(1);
    expect(sqsFake.sent[0]?.receiveCount).toBe(2);
  });

  it('scheduling the same name again is taken as already scheduled (ConflictException)', async () => {
    await scheduler.schedule({ name: 'inc-1-retry-3', at: T0 + 90_000, event: retryDue(3) });
    await scheduler.schedule({ name: 'inc-1-retry-3', at: T0 + 90_000, event: retryDue(3) });
    expect(schedulerFake.requests.map((r) => r.operation)).toEqual(['CreateSchedule', 'CreateSchedule']);
    expect(schedulerFake.schedules()).toHaveLength(1);
    await advance(90_000 + PRECISION_MS);
    expect(probed).toHaveLength(1);
  });

  it('cancel deletes a pending schedule; cancelling a missing one is fine', async () => {
    await scheduler.schedule({ name: 'inc-1-retry-3', at: T0 + 90_000, event: retryDue(3) });
    await scheduler.cancel('inc-1-retry-3');
    await scheduler.cancel('inc-1-retry-3');
    await scheduler.cancel('never-scheduled');
    expect(schedulerFake.requests.map((r) => [r.operation, r.name, r.groupName])).toEqual([
      ['CreateSchedule', 'inc-1-retry-3', GROUP],
      ['DeleteSchedule', 'inc-1-retry-3', GROUP],
      ['DeleteSchedule', 'inc-1-retry-3', GROUP],
      ['DeleteSchedule', 'never-scheduled', GROUP],
    ]);
    await advance(90_000 + PRECISION_MS);
    expect(probed).toHaveLength(0);
  });

  it('a name Scheduler cannot take is cleaned and hashed, the same way for schedule and cancel', async () => {
    const name = `${'incident/with:odd chars'.repeat(4)}-retry-12`;
    await scheduler.schedule({ name, at: T0 + 90_000, event: retryDue(12) });
    const [stored] = schedulerFake.schedules();
    expect(stored?.name).toBe(scheduleName(name));
    expect(stored?.request.Description).toBe(name);
    await scheduler.cancel(name);
    expect(schedulerFake.schedules()).toHaveLength(0);
  });

  it('another error from Scheduler is thrown: an unknown group', async () => {
    const wrong = createAwsScheduler({ ...options, groupName: 'no-such-group' });
    await expect(wrong.schedule({ name: 'x', at: T0 + 90_000, event: retryDue(1) })).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

  const createAt = (name: string, expression: string, window: FlexibleTimeWindow = { Mode: 'OFF' }) =>
    clients.scheduler.send(
      new CreateScheduleCommand({
        Name: name,
        GroupName: GROUP,
        ScheduleExpression: expression,
        FlexibleTimeWindow: window,
        Target: { Arn: options.busArn, RoleArn: ROLE, Input: '{}', EventBridgeParameters: { DetailType: 'RetryDue', Source: EVENT_SOURCE } },
      }),
    );

  it('accepts a schedule a few seconds out, as Scheduler does, and fires it within its minute: 30 s late by default', async () => {
    await createAt('soon', 'at(2030-01-01T00:00:05)');
    expect(schedulerFake.schedules().map((s) => s.firesAt - s.fireAt)).toEqual([PRECISION_MS / 2]);
    await advance(5_000 + PRECISION_MS / 2 - 1);
    expect(probed).toHaveLength(0);
    await advance(1);
    expect(probed).toHaveLength(1);
  });

  it('the firing delay is chosen per schedule, kept inside the window (60 s, or the flexible one), and compressible', async () => {
    const fakes = [
      await startSchedulerFake({ eventBridge, clock, groups: [GROUP], firingDelayMs: 90_000 }),
      await startSchedulerFake({ eventBridge, clock, groups: [GROUP], firingDelayMs: (_s, window) => window - 1_000 }),
      await startSchedulerFake({ eventBridge, clock, groups: [GROUP], compression: 1_000 }),
    ];
    try {
      for (const fake of fakes) {
        const client = new SchedulerClient(sdkConfig(fake.endpoint));
        await client.send(
          new CreateScheduleCommand({
            Name: 'flex',
            GroupName: GROUP,
            ScheduleExpression: 'at(2030-01-01T00:10:00)',
            FlexibleTimeWindow: fake === fakes[1] ? { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 } : { Mode: 'OFF' },
            Target: { Arn: options.busArn, RoleArn: ROLE, Input: '{}', EventBridgeParameters: { DetailType: 'RetryDue', Source: EVENT_SOURCE } },
          }),
        );
        client.destroy();
      }
      expect(fakes.map((f) => f.schedules().map((s) => s.firesAt - s.fireAt))).toEqual([[PRECISION_MS - 1], [15 * 60_000 - 1_000], [30]]);
    } finally {
      await Promise.all(fakes.map((f) => f.close()));
    }
  });

  it('refuses a FLEXIBLE window without its MaximumWindowInMinutes', async () => {
    await expect(createAt('flex', 'at(2030-01-01T00:10:00)', { Mode: 'FLEXIBLE' })).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining('MaximumWindowInMinutes must be an integer from 1 to 1440'),
    });
  });

  it('a schedule whose event cannot reach the bus goes to its DLQ after the retries of its policy', async () => {
    eventBridge.failEntries({ times: Infinity, errorCode: 'InternalFailure' });
    await scheduler.schedule({ name: 'inc-1-retry-3', at: T0 + 90_000, event: retryDue(3) });
    await advance(90_000 + PRECISION_MS);
    expect(schedulerFake.firings.map((f) => [f.tries.length, f.deadLetterArn])).toEqual([[11, DLQ]]);
    expect(probed).toHaveLength(0);
  });
});
