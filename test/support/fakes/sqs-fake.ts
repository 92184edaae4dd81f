// A protocol-level fake of SQS for the real @aws-sdk/client-sqs, which speaks AWS JSON 1.0 (POST /,
// x-amz-target AmazonSQS.SendMessage, x-amzn-query-mode: true; errors carry the query-compatible
// x-amzn-query-error header). Only SendMessage is implemented, with DelaySeconds. A message becomes
// visible DelaySeconds after it was sent, on the fake's clock; the queue's consumer (the Pipe fake)
// gets it then, and a consumer that throws leaves it to come back after the visibility timeout.
import { createHash, randomUUID } from 'node:crypto';
import { type Clock } from '../../../functions/ports/clock.ts';
import { systemClock } from '../../../functions/adapters/local/system-clock.ts';
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
  /** How long a message a consumer failed on stays invisible (default 30 s, SQS's default). */
  visibilityTimeoutMs?: number;
  /** Deliver on a timer when due on the clock, rather than only on runDue(). */
  autoRun?: boolean;
}

export interface SqsFake {
  readonly endpoint: string;
  /** Every message ever sent, in order. */
  readonly sent: readonly QueuedMessage[];
  queueUrl(name: string): string;
  queueArn(name: string): string;
  /** Messages still in the queue (not yet consumed). */
  pending(queue: string): QueuedMessage[];
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
  const visibilityTimeoutMs = options.visibilityTimeoutMs ?? 30_000;
  const queues = new Map(options.queues.map((name) => [name, [] as QueuedMessage[]]));
  const consumers = new Map<string, QueueConsumer>();
  const sent: QueuedMessage[] = [];
  const timer = dueTimer(clock, options.autoRun ?? false, () => void runDue());
  let endpoint = '';
  let running: Promise<number> | undefined;

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
    if (typeof body.MessageBody !== 'string' || body.MessageBody === '') throw new AwsFakeError(400, 'MissingParameter', 'The request must contain the parameter MessageBody.');
    const delay = body.DelaySeconds ?? 0;
    if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS) {
      throw new AwsFakeError(400, 'InvalidParameterValue', `Value ${JSON.stringify(delay)} for parameter DelaySeconds is invalid. Reason: must be between 0 and ${MAX_DELAY_SECONDS}.`);
    }
    const now = clock.now();
    const message: QueuedMessage = { queue: name, messageId: randomUUID(), body: body.MessageBody, delaySeconds: delay, sentAt: now, visibleAt: now + delay * 1000, receiveCount: 0, request: body };
    queue.push(message);
    sent.push(message);
    arm();
    // The SDK checks this digest against the body it sent.
    return { status: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: { MessageId: message.messageId, MD5OfMessageBody: createHash('md5').update(message.body).digest('hex') } };
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

  async function pass(): Promise<number> {
    let consumed = 0;
    const now = clock.now();
    for (const [name, messages] of queues) {
      const consumer = consumers.get(name);
      if (!consumer) continue;
      for (const message of messages.filter((m) => m.visibleAt <= now).sort((a, b) => a.visibleAt - b.visibleAt)) {
        message.receiveCount++;
        try {
          await consumer(message);
          messages.splice(messages.indexOf(message), 1);
          consumed++;
        } catch {
          message.visibleAt = clock.now() + visibilityTimeoutMs;
        }
      }
    }
    return consumed;
  }

  /** One pass at a time, so a message is never handed to its consumer twice at once. */
  async function runDue(): Promise<number> {
    while (running) await running.catch(() => 0);
    running = pass();
    try {
      return await running;
    } finally {
      running = undefined;
      arm();
    }
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
