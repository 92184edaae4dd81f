// The SQS fake against the Developer Guide's redelivery rules, with the real SDK client on a
// manual clock: the visibility timeout from a received message's receive, redrive to the
// dead-letter queue after maxReceiveCount (both read from a CDK-synthesized template), at-least-once
// delivery, and compression of the timeout.
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Duration, Stack } from 'aws-cdk-lib';
import { testApp } from '../../infra/test-app.ts';
import { Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CfnTemplate } from '../../support/fakes/cfn-template.ts';
import { startSqsFake, type QueuedMessage, type SqsFake, type SqsFakeOptions } from '../../support/fakes/sqs-fake.ts';
import { manualClock } from '../../support/manual-clock.ts';
import { sdkConfig } from '../../integration/aws/synth-stack.ts';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

function queueTemplate(): { template: CfnTemplate; queue: string; dlq: string } {
  const stack = new Stack(testApp(), 'Queues');
  const dlq = new sqs.Queue(stack, 'Dlq');
  const queue = new sqs.Queue(stack, 'Work', { visibilityTimeout: Duration.seconds(20), deadLetterQueue: { queue: dlq, maxReceiveCount: 3 } });
  const id = (q: sqs.Queue) => stack.getLogicalId(q.node.defaultChild as sqs.CfnQueue);
  return { template: Template.fromStack(stack).toJSON(), queue: id(queue), dlq: id(dlq) };
}

describe('SQS fake: redelivery as the Developer Guide states it', () => {
  let synthesized: ReturnType<typeof queueTemplate>;
  const open: { close(): Promise<void> }[] = [];
  beforeAll(() => {
    synthesized = queueTemplate();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((o) => o.close()));
  });

  async function start(options: Partial<SqsFakeOptions> = {}) {
    const clock = manualClock(T0);
    const fake: SqsFake = await startSqsFake({ queues: [synthesized.queue], template: synthesized.template, clock, ...options });
    const client = new SQSClient(sdkConfig(fake.endpoint));
    open.push(fake, { close: async () => client.destroy() });
    const send = (body: string, DelaySeconds?: number) =>
      client.send(new SendMessageCommand({ QueueUrl: fake.queueUrl(synthesized.queue), MessageBody: body, DelaySeconds }));
    return { fake, clock, send };
  }

  it('reads VisibilityTimeout and RedrivePolicy from the template', async () => {
    const { fake } = await start();
    expect(fake.attributes(synthesized.queue)).toEqual({
      visibilityTimeoutSeconds: 20,
      visibilityTimeoutMs: 20_000,
      redrive: { deadLetterQueue: synthesized.dlq, maxReceiveCount: 3 },
    });
    expect(fake.pending(synthesized.dlq)).toEqual([]);
  });

  it('a message its consumer fails on comes back after the visibility timeout, counted from the receive', async () => {
    const { fake, clock, send } = await start();
    const seen: number[] = [];
    fake.consume(synthesized.queue, async () => {
      seen.push(clock.now() - T0);
      throw new Error('target down');
    });
    await send('a');
    expect(await fake.runDue()).toBe(0);
    clock.advance(19_999);
    await fake.runDue();
    expect(seen).toEqual([0]);
    clock.advance(1);
    await fake.runDue();
    expect(seen).toEqual([0, 20_000]);
  });

  it('after maxReceiveCount receives the message moves to the dead-letter queue instead of a fourth', async () => {
    const { fake, clock, send } = await start();
    let receives = 0;
    fake.consume(synthesized.queue, async () => {
      receives++;
      throw new Error('target down');
    });
    await send('poison');
    for (let i = 0; i < 5; i++) {
      await fake.runDue();
      clock.advance(20_000);
    }
    expect(receives).toBe(3);
    expect(fake.pending(synthesized.queue)).toEqual([]);
    expect(fake.pending(synthesized.dlq).map((m) => [m.body, m.receiveCount])).toEqual([['poison', 3]]);
  });

  it('a consumer slower than the visibility timeout gets its message handed out again meanwhile', async () => {
    const { fake, clock, send } = await start();
    const handed: QueuedMessage[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.consume(synthesized.queue, async (message) => {
      handed.push(message);
      if (handed.length === 1) await held;
    });
    await send('slow');
    const first = fake.runDue();
    clock.advance(20_000);
    expect(await fake.runDue()).toBe(1);
    release();
    expect(await first).toBe(1);
    expect(handed.map((m) => m.receiveCount)).toEqual([2, 2]);
    expect(fake.pending(synthesized.queue)).toEqual([]);
  });

  it('at least once: a message picked for it is delivered once more after its delete, and only once more', async () => {
    const { fake, send } = await start({ duplicate: () => true });
    const bodies: string[] = [];
    fake.consume(synthesized.queue, async (message) => void bodies.push(message.body));
    await send('twice');
    await fake.runDue();
    await fake.runDue();
    await fake.runDue();
    expect(bodies).toEqual(['twice', 'twice']);
    expect(fake.pending(synthesized.queue)).toEqual([]);
  });

  it("compression divides the visibility timeout, not the sender's DelaySeconds", async () => {
    const { fake, send } = await start({ compression: 1_000 });
    expect(fake.attributes(synthesized.queue).visibilityTimeoutMs).toBe(20);
    await send('later', 2);
    expect(fake.pending(synthesized.queue).map((m) => m.visibleAt - m.sentAt)).toEqual([2_000]);
    await expect(start({ compression: 0.5 })).rejects.toThrow('compression must be a finite number of at least 1, got 0.5');
  });
});
