// The Pipe fake: the target it runs is the contract of short-wait.ts, read back from a synthesized
// AWS::Pipes::Pipe; what it does not implement is refused when connected; on a running clock it
// delivers by itself.
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAwsScheduler } from '../../../functions/adapters/aws/scheduler.ts';
import { RETRY_DUE_FIELDS } from '../../../functions/adapters/aws/short-wait-queue.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { retryDueSchema } from '../../../events/schemas/retry.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import type { EventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import { startEventBridgeFake, type EventBridgeFake } from '../../support/fakes/eventbridge-fake.ts';
import { connectPipe, contractPipe, pipeFromTemplate, type PipeTarget } from '../../support/fakes/pipe-fake.ts';
import { startSqsFake, type SqsFake } from '../../support/fakes/sqs-fake.ts';
import { loadSample } from '../../unit/events/samples.ts';
import { sdkConfig, synthesize, type SynthesizedStack } from './synth-stack.ts';

describe('short-wait pipe fake', () => {
  let stack: SynthesizedStack;
  const open: { close(): Promise<void> }[] = [];
  const start = async () => {
    const eventBridge: EventBridgeFake = await startEventBridgeFake({ template: stack.template });
    const sqs: SqsFake = await startSqsFake({ queues: ['q'], autoRun: true });
    open.push(eventBridge, sqs);
    return { eventBridge, sqs };
  };

  beforeAll(() => {
    stack = synthesize();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((f) => f.close()));
  });

  it('reads from the synthesized AWS::Pipes::Pipe exactly the contract of short-wait.ts', () => {
    const { logicalId: _id, sourceLogicalId, ...target } = pipeFromTemplate(stack.template);
    expect(target).toEqual(contractPipe(stack.busName));
    expect(sourceLogicalId).toBe(stack.queueId);
  });

  it.each<[string, Partial<PipeTarget>, string]>([
    ['no InputTemplate', { inputTemplate: undefined }, 'without one the detail would be the whole SQS record'],
    ['a dynamic Source', { source: '$.body.source' }, 'Source must be a static string'],
    ['a DetailType path outside the body', { detailType: '$.attributes.x' }, 'DetailType must be static or "$.body.<path>"'],
  ])('refuses a pipe with %s', async (_name, change, message) => {
    const { eventBridge, sqs } = await start();
    expect(() => connectPipe({ sqs, queue: 'q', eventBridge, target: { ...contractPipe(stack.busName), ...change } })).toThrow(message);
  });

  it('under the documented transformer rules, the bare "<$.body.detail>" template fails delivery (MalformedDetail) and the message stays queued', async () => {
    const { eventBridge, sqs } = await start();
    const pipe = connectPipe({ sqs, queue: 'q', eventBridge, target: { ...contractPipe(stack.busName), inputTemplate: '<$.body.detail>' } });
    let reached = 0;
    eventBridge.onTarget(stack.functionIds['probe-members'], () => void (reached += 1));
    const sqsClient = new SQSClient(sdkConfig(sqs.endpoint));
    const detail = loadSample('RetryDue');
    await sqsClient.send(new SendMessageCommand({ QueueUrl: sqs.queueUrl('q'), MessageBody: JSON.stringify({ detailType: 'RetryDue', detail }) }));
    await waitFor(async () => (pipe.deliveries.length > 0 ? true : undefined), { timeoutMs: 5_000, what: 'the pipe to try the message' });
    expect(pipe.deliveries[0]!.result).toMatchObject({ ErrorCode: 'MalformedDetail' });
    expect(reached).toBe(0);
    // Back in the queue after the visibility timeout, toward the DLQ once maxReceiveCount is spent.
    expect(sqs.pending('q').map((m) => m.receiveCount)).toEqual([1]);
    sqsClient.destroy();
  });

  it("the SQS-to-bus hop takes the pipe's latency", async () => {
    const { eventBridge, sqs } = await start();
    connectPipe({ sqs, queue: 'q', eventBridge, target: contractPipe(stack.busName), latencyMs: 150 });
    const sqsClient = new SQSClient(sdkConfig(sqs.endpoint));
    const sentAt = performance.now();
    await sqsClient.send(
      new SendMessageCommand({ QueueUrl: sqs.queueUrl('q'), MessageBody: JSON.stringify({ detailType: 'RetryDue', detail: loadSample('RetryDue') }) }),
    );
    await waitFor(async () => (eventBridge.accepted.length > 0 ? true : undefined), { timeoutMs: 5_000, what: 'the RetryDue on the bus' });
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(150 - 1);
    sqsClient.destroy();
  });

  it('the contract template carries every field of RetryDue, each as its type', () => {
    expect(Object.keys(RETRY_DUE_FIELDS).sort()).toEqual(Object.keys(retryDueSchema.shape).sort());
    const detail = loadSample('RetryDue') as Record<string, unknown>;
    for (const [field, type] of Object.entries(RETRY_DUE_FIELDS)) expect(typeof detail[field], field).toBe(type);
  });

  it('on a running clock, delivers a message whose delay is over without being told', async () => {
    const { eventBridge, sqs } = await start();
    connectPipe({ sqs, queue: 'q', eventBridge, target: contractPipe(stack.busName) });
    const delivered = new Promise<EventBridgeEvent>((resolve) => eventBridge.onTarget(stack.functionIds['probe-members'], resolve));
    const sqsClient = new SQSClient(sdkConfig(sqs.endpoint));
    const schedulerClient = new SchedulerClient(sdkConfig('http://127.0.0.1:9'));
    const scheduler = createAwsScheduler({
      scheduler: schedulerClient,
      sqs: sqsClient,
      groupName: 'g',
      busArn: eventBridge.busArn(stack.busName),
      roleArn: 'r',
      dlqArn: 'd',
      shortWaitQueueUrl: sqs.queueUrl('q'),
      clock: systemClock,
    });
    const detail = loadSample('RetryDue');
    await scheduler.schedule({ name: 'now', at: systemClock.now(), event: { detailType: 'RetryDue', detail } });
    const event = await delivered;
    expect([event['detail-type'], event.detail]).toEqual(['RetryDue', detail]);
    sqsClient.destroy();
    schedulerClient.destroy();
  });
});
