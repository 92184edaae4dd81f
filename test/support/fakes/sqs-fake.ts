// A protocol-level fake of SQS for the real @aws-sdk/client-sqs, which speaks AWS JSON 1.0 (POST /,
// x-amz-target AmazonSQS.SendMessage, x-amzn-query-mode: true; errors carry the query-compatible
// x-amzn-query-error header). Only SendMessage is implemented, with DelaySeconds; the queue's
// consumer (the Pipe fake) receives in process.
//
// What it models, from the Amazon SQS Developer Guide:
// - "Amazon SQS delay queues" / "Amazon SQS message timers": a message is invisible for its
//   DelaySeconds (0 to 900) after it was sent, on the fake's clock.
// - "Amazon SQS visibility timeout": a message received stays in the queue, invisible, for the
//   queue's visibility timeout from the receive (the template's VisibilityTimeout, else 30 s), and
//   comes back unless the consumer deleted it (here: returned without throwing) by then. A consumer
//   slower than the timeout sees its message handed out again meanwhile.
// - "Using dead-letter queues in Amazon SQS": with the template's RedrivePolicy, a message whose
//   receive count has reached maxReceiveCount moves to the dead-letter queue instead of being
//   received again.
// - "Amazon SQS standard queues": at-least-once delivery, so now and then a message is delivered
//   again after it was deleted; `duplicate` picks the messages that are (each once more).
// The visibility timeout is compressible (compression.ts); DelaySeconds is the sender's.
import { createHash, randomUUID } from 'node:crypto';
import { type Clock } from '../../../functions/ports/clock.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import { queueAttributesOf, type CfnTemplate, type QueueAttributes } from './cfn-template.ts';
import { compress } from './compression.ts';
import { dueTimer } from './due-timer.ts';
import { AwsFakeError, jsonBody, startFakeServer, type FakeRequest, type FakeResponse } from './http.ts';

export interface QueuedMessage {
  queue: string;
  messageId: string;
  body: string;
  delaySeconds: number;
  sentAt: number;
  visibleAt: number;
  receiveCount: number;
  /** Set on the copy an at-least-once delivery hands out again. */
  duplicateOf?: string;
  /** The request body as the SDK sent it. */
  request: Record<string, unknown>;
}

export type QueueConsumer = (message: QueuedMessage) => Promise<void>;

export interface SqsFakeOptions {
  /** Queue names that exist. */
  queues: string[];
  clock?: Clock;
  account?: string;
  region?: string;
  /** Queues named by their logical id take VisibilityTimeout and RedrivePolicy from here; their dead-letter queues exist too. */
  template?: CfnTemplate;
  /** How long a received message stays invisible where the template does not say (default 30 s, SQS's default). */
  visibilityTimeoutMs?: number;
  /** Divides the visibility timeout (compression.ts). */
  compression?: number;
  /** At least once: a message this picks is delivered once more after its consumer deleted it. */
  duplicate?: (message: QueuedMessage) => boolean;
  /** Deliver on a timer when due on the clock, rather than only on runDue(). */
  autoRun?: boolean;
}

export interface SqsFake {
  readonly endpoint: string;
  /** Every message ever sent, in order. */
  readonly sent: readonly QueuedMessage[];
  queueUrl(name: string): string;
  queueArn(name: string): string;
  /** Messages still in the queue (not yet consumed); a dead-letter queue's too. */
  pending(queue: string): QueuedMessage[];
  /** What the queue's redelivery follows: the template's attributes, or SQS's defaults. */
  attributes(queue: string): QueueAttributes & { visibilityTimeoutMs: number };
  consume(queue: string, consumer: QueueConsumer): void;
  /** Hands every visible message to its queue's consumer, oldest first; returns how many were consumed. */
  runDue(): Promise<number>;
  close(): Promise<void>;
}

const MAX_DELAY_SECONDS = 900;
const QUERY_ERRORS: Record<string, string> = {
  QueueDoesNotExist: 'AWS.SimpleQueueService.NonExistentQueue;Sender',
  InvalidParameterValue: 'InvalidParameterValue;Sender',
  MissingParameter: 'MissingParameter;Sender',
  UnsupportedOperation: 'AWS.SimpleQueueService.UnsupportedOperation;Sender',
};

export async function startSqsFake(options: SqsFakeOptions): Promise<SqsFake> {
  const clock = options.clock ?? systemClock;
  const account = options.account ?? '000000000000';
  const region = options.region ?? 'us-east-1';
  const attributesOf = new Map(options.queues.map((name) => [name, (options.template && queueAttributesOf(options.template, name)) || {}]));
  const deadLetterQueues = [...attributesOf.values()].flatMap((a) => (a.redrive ? [a.redrive.deadLetterQueue] : []));
  const queues = new Map([...options.queues, ...deadLetterQueues].map((name) => [name, [] as QueuedMessage[]]));
  const timeouts = new Map(
    [...queues.keys()].map((name) => {
      const seconds = attributesOf.get(name)?.visibilityTimeoutSeconds;
      return [name, compress(seconds === undefined ? (options.visibilityTimeoutMs ?? 30_000) : seconds * 1000, options.compression)];
    }),
  );
  const visibilityTimeoutOf = (queue: string) => timeouts.get(queue) ?? 30_000;
  const consumers = new Map<string, QueueConsumer>();
  const sent: QueuedMessage[] = [];
  const timer = dueTimer(clock, options.autoRun ?? false, () => void runDue());
  let endpoint = '';

  const arm = () =>
    timer.arm(
      [...queues.entries()]
        .filter(([name]) => consumers.has(name))
        .flatMap(([, messages]) => messages.map((m) => m.visibleAt))
        .reduce<number | undefined>((min, at) => Math.min(min ?? at, at), undefined),
    );

  function sendMessage(body: Record<string, unknown>): FakeResponse {
    const url = typeof body.QueueUrl === 'string' ? body.QueueUrl : '';
    const name = url.split('/').pop() ?? '';
    const queue = url.startsWith(`${endpoint}/`) ? queues.get(name) : undefined;
    if (!queue) throw new AwsFakeError(400, 'QueueDoesNotExist', `The specified queue ${url} does not exist.`);
    if (typeof body.MessageBody !== 'string' || body.MessageBody === '')
      throw new AwsFakeError(400, 'MissingParameter', 'The request must contain the parameter MessageBody.');
    const delay = body.DelaySeconds ?? 0;
    if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS) {
      throw new AwsFakeError(
        400,
        'InvalidParameterValue',
        `Value ${JSON.stringify(delay)} for parameter DelaySeconds is invalid. Reason: must be between 0 and ${MAX_DELAY_SECONDS}.`,
      );
    }
    const now = clock.now();
    const message: QueuedMessage = {
      queue: name,
      messageId: randomUUID(),
      body: body.MessageBody,
      delaySeconds: delay,
      sentAt: now,
      visibleAt: now + delay * 1000,
      receiveCount: 0,
      request: body,
    };
    queue.push(message);
    sent.push(message);
    arm();
    // The SDK checks this digest against the body it sent.
    return {
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: { MessageId: message.messageId, MD5OfMessageBody: createHash('md5').update(message.body).digest('hex') },
    };
  }

  function handle(request: FakeRequest): FakeResponse {
    const operation = String(request.headers['x-amz-target']);
    if (request.method !== 'POST' || operation !== 'AmazonSQS.SendMessage') {
      throw new AwsFakeError(400, 'UnsupportedOperation', `the SQS fake implements only AmazonSQS.SendMessage, not ${operation}`);
    }
    if (request.headers['content-type'] !== 'application/x-amz-json-1.0') {
      throw new AwsFakeError(400, 'UnsupportedOperation', `the SQS fake speaks AWS JSON 1.0, got content-type ${String(request.headers['content-type'])}`);
    }
    return sendMessage(jsonBody(request));
  }

  /** Moves a message to its queue's dead-letter queue once its receives reached maxReceiveCount. */
  function redriven(name: string, messages: QueuedMessage[], message: QueuedMessage): boolean {
    const redrive = attributesOf.get(name)?.redrive;
    if (!redrive || message.receiveCount < redrive.maxReceiveCount) return false;
    messages.splice(messages.indexOf(message), 1);
    queues.get(redrive.deadLetterQueue)?.push({ ...message, queue: redrive.deadLetterQueue });
    return true;
  }

  /** Receives one message: invisible for the visibility timeout, deleted when its consumer returns. */
  async function receive(messages: QueuedMessage[], message: QueuedMessage, consumer: QueueConsumer, now: number): Promise<number> {
    message.receiveCount++;
    message.visibleAt = now + visibilityTimeoutOf(message.queue);
    try {
      await consumer(message);
    } catch {
      // Not deleted: back when its visibility timeout is over.
      return 0;
    }
    const at = messages.indexOf(message);
    if (at >= 0) messages.splice(at, 1);
    if (options.duplicate && message.duplicateOf === undefined && options.duplicate(message)) {
      // Another copy of the message, still on a server that missed the delete.
      messages.push({ ...message, duplicateOf: message.messageId, visibleAt: clock.now() });
    }
    return 1;
  }

  /**
   * Hands every visible message to its queue's consumer at once, as a poller receives them;
   * each is invisible from then on, so a second pass meanwhile does not hand it out again.
   */
  async function runDue(): Promise<number> {
    const now = clock.now();
    const receiving: Promise<number>[] = [];
    for (const [name, messages] of queues) {
      const consumer = consumers.get(name);
      if (!consumer) continue;
      for (const message of messages.filter((m) => m.visibleAt <= now).sort((a, b) => a.visibleAt - b.visibleAt)) {
        if (!redriven(name, messages, message)) receiving.push(receive(messages, message, consumer, now));
      }
    }
    arm();
    const consumed = (await Promise.all(receiving)).reduce((n, c) => n + c, 0);
    arm();
    return consumed;
  }

  const server = await startFakeServer(handle, (error) => ({
    status: error.status,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-query-error': QUERY_ERRORS[error.code] ?? `${error.code};Sender` },
    body: { __type: `com.amazonaws.sqs#${error.code}`, message: error.message },
  }));
  endpoint = server.endpoint;

  return {
    endpoint,
    sent,
    queueUrl: (name) => `${endpoint}/${account}/${name}`,
    queueArn: (name) => `arn:aws:sqs:${region}:${account}:${name}`,
    pending: (queue) => [...(queues.get(queue) ?? [])],
    attributes: (queue) => ({ ...attributesOf.get(queue), visibilityTimeoutMs: visibilityTimeoutOf(queue) }),
    consume: (queue, consumer) => {
      consumers.set(queue, consumer);
      arm();
    },
    runDue,
    close: async () => {
      timer.stop();
      await server.close();
    },
  };
}
