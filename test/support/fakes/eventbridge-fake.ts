// A protocol-level fake of EventBridge for the real @aws-sdk/client-eventbridge: PutEvents in AWS
// JSON 1.1 (POST /, x-amz-target AWSEvents.PutEvents). It records every entry, fails the entries a
// test chooses, and routes each accepted entry by the AWS::Events::Rule resources of a synthesized
// template to handlers registered per target ARN or logical id, asynchronously, as EventBridge
// delivers: an event object with version, id, detail-type, source, account, time, region,
// resources and detail.
//
// What it models, from the EventBridge User Guide:
// - "Amazon EventBridge PutEvents" / "Amazon EventBridge quotas": 1 to 10 entries a call and 256 KB
//   a request (entry sizes as "Calculating Amazon EventBridge PutEvents event entry size" counts
//   them); Detail must be a JSON object; a failed entry is reported in the answer, not thrown.
// - "Event bus targets in Amazon EventBridge": PutEvents answers before any target runs; each
//   delivery takes `latencyMs` (the bus-to-target hop) on top.
// - "Retrying event delivery" / "Using dead-letter queues to process undelivered events": a
//   delivery that fails (here: a handler that throws) is retried with exponential backoff, up to
//   the target's RetryPolicy (default 185 retries and 24 hours), then goes to its DeadLetterConfig
//   or is dropped. The guide gives no backoff schedule: `retryDelayMs` (default 1 s doubling to
//   5 min), compressible (compression.ts).
// - At-least-once delivery: `duplicate` picks events that are delivered twice.
// Latency and retry waits run on timers; only the event's `time` is read from the fake's clock.
import { randomUUID } from 'node:crypto';
import { type Clock } from '../../../functions/ports/clock.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import type { EventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import { busNameOf, busNamesOf, type CfnRefs, type CfnTemplate } from './cfn-template.ts';
import { compress } from './compression.ts';
import { AwsFakeError, jsonBody, startFakeServer, type FakeRequest, type FakeResponse } from './http.ts';
import { rulesFromTemplate, type LoadedRule, type RuleTarget } from './template-rules.ts';

export interface PutEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  EventBusName?: string;
  Resources?: string[];
  /** Epoch seconds, as the SDK serializes a timestamp in AWS JSON. */
  Time?: number;
}

export interface PutResult {
  EventId?: string;
  ErrorCode?: string;
  ErrorMessage?: string;
}

export interface PutEventsCall {
  entries: PutEntry[];
  results: PutResult[];
}

export interface AcceptedEvent {
  busName: string;
  event: EventBridgeEvent;
  /** When PutEvents took it, on the fake's clock, in ms (the event's `time` is to the second). */
  acceptedAt: number;
}

export interface Delivery {
  rule: string;
  target: RuleTarget;
  event: EventBridgeEvent;
  status: 'pending' | 'delivered' | 'failed' | 'no-handler';
  error?: unknown;
  /** Tries so far, the first included. */
  tries: number;
  /** Set when every try failed and the target has a DeadLetterConfig: its ARN or logical id. */
  deadLetter?: string;
}

export interface EntryFailure {
  /** Which entries fail (default: any). */
  match?: (entry: PutEntry) => boolean;
  /** How many entries fail before this failure is spent (default 1; Infinity for always). */
  times?: number;
  errorCode?: string;
  errorMessage?: string;
}

export type TargetHandler = (event: EventBridgeEvent) => unknown;

export interface EventBridgeFakeOptions {
  /** The synthesized template; its rules route the entries. */
  template?: CfnTemplate;
  /** Values for Ref / GetAtt the template cannot resolve by itself. */
  refs?: CfnRefs;
  /** Buses that exist besides `default` and those of the template. */
  buses?: string[];
  clock?: Clock;
  region?: string;
  account?: string;
  /** The bus-to-target hop: each try of a delivery starts this long after its event was put (or its retry was due). */
  latencyMs?: number;
  /** The wait before retry n (1, 2, …), as documented delays before compression. */
  retryDelayMs?: (retry: number) => number;
  /** Divides the retry waits (compression.ts); the hop latency is not compressed. */
  compression?: number;
  /** At least once: an event this picks is delivered to the target twice, at once. */
  duplicate?: (event: EventBridgeEvent, target: RuleTarget) => boolean;
}

export interface EventBridgeFake {
  readonly endpoint: string;
  readonly region: string;
  readonly account: string;
  readonly rules: readonly LoadedRule[];
  /** Every PutEvents call, over HTTP or in process, with its results. */
  readonly calls: readonly PutEventsCall[];
  readonly accepted: readonly AcceptedEvent[];
  readonly deliveries: readonly Delivery[];
  busArn(name: string): string;
  /** Receives every event routed to the target of this ARN or logical id. */
  onTarget(arnOrLogicalId: string, handler: TargetHandler): void;
  failEntries(failure: EntryFailure): void;
  /** PutEvents as the service does it, for the fakes of services that put events (Scheduler, Pipes). */
  putEvents(entries: PutEntry[]): PutResult[];
  /** Resolves once no delivery is in flight, including those started by handlers meanwhile. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** A target without a RetryPolicy: "Retrying event delivery" says 24 hours and up to 185 times. */
export const DEFAULT_TARGET_RETRY = { maximumRetryAttempts: 185, maximumEventAgeInSeconds: 86_400 } as const;
/** Exponential, as the guide says; its numbers are this fake's: 1 s doubling, capped at 5 minutes. */
export const defaultRetryDelayMs = (retry: number): number => Math.min(300_000, 1_000 * 2 ** (retry - 1));

const MAX_ENTRIES = 10;
const MAX_REQUEST_BYTES = 256 * 1024;

const utf8 = (text: string | undefined) => (text === undefined ? 0 : Buffer.byteLength(text, 'utf8'));
const entrySize = (e: PutEntry) =>
  (e.Time !== undefined ? 14 : 0) + utf8(e.Source) + utf8(e.DetailType) + utf8(e.Detail) + (e.Resources ?? []).reduce((n, r) => n + utf8(r), 0);

/** EventBridge writes times to the second. */
const isoSeconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

export async function startEventBridgeFake(options: EventBridgeFakeOptions = {}): Promise<EventBridgeFake> {
  const template = options.template ?? {};
  const rules = rulesFromTemplate(template, options.refs);
  const clock = options.clock ?? systemClock;
  const latency = options.latencyMs ?? 0;
  // A bad compression is refused at start, not at the first retry.
  compress(1, options.compression);
  const region = options.region ?? 'us-east-1';
  const account = options.account ?? '000000000000';
  const buses = new Set(['default', ...busNamesOf(template), ...rules.map((r) => r.busName), ...(options.buses ?? [])]);
  const calls: PutEventsCall[] = [];
  const accepted: AcceptedEvent[] = [];
  const deliveries: Delivery[] = [];
  const failures: (EntryFailure & { left: number })[] = [];
  const handlers = new Map<string, TargetHandler>();
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  const settle = () => {
    if (inFlight > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const later = (ms: number) => new Promise<void>((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));

  /** One delivery of an event to a target: tries until the handler returns, or the RetryPolicy is spent. */
  async function attempt(delivery: Delivery): Promise<void> {
    const { target, event } = delivery;
    const handler = (target.arn && handlers.get(target.arn)) || (target.logicalId && handlers.get(target.logicalId)) || undefined;
    const retries = target.retryPolicy?.maximumRetryAttempts ?? DEFAULT_TARGET_RETRY.maximumRetryAttempts;
    const maxAgeMs = (target.retryPolicy?.maximumEventAgeInSeconds ?? DEFAULT_TARGET_RETRY.maximumEventAgeInSeconds) * 1000;
    const putAt = performance.now();
    for (let retry = 0; ; retry++) {
      await later(latency);
      if (!handler) {
        delivery.status = 'no-handler';
        return;
      }
      delivery.tries++;
      try {
        await handler(structuredClone(event));
        delivery.status = 'delivered';
        return;
      } catch (error) {
        delivery.error = error;
      }
      const wait = compress((options.retryDelayMs ?? defaultRetryDelayMs)(retry + 1), options.compression);
      if (retry >= retries || performance.now() - putAt + wait > compress(maxAgeMs, options.compression)) break;
      await later(wait);
    }
    delivery.status = 'failed';
    if (target.deadLetter) delivery.deadLetter = target.deadLetter;
  }

  function deliver(rule: LoadedRule, target: RuleTarget, event: EventBridgeEvent): void {
    const copies = options.duplicate?.(event, target) ? 2 : 1;
    for (let copy = 0; copy < copies; copy++) {
      const delivery: Delivery = { rule: rule.logicalId, target, event, status: 'pending', tries: 0 };
      deliveries.push(delivery);
      inFlight++;
      // Asynchronous, as EventBridge is: PutEvents has answered before any target runs.
      void attempt(delivery).finally(() => {
        inFlight--;
        settle();
      });
    }
  }

  function failureFor(entry: PutEntry): PutResult | undefined {
    const failure = failures.find((f) => f.left > 0 && (f.match?.(entry) ?? true));
    if (!failure) return undefined;
    failure.left--;
    return { ErrorCode: failure.errorCode ?? 'InternalFailure', ErrorMessage: failure.errorMessage ?? 'injected failure' };
  }

  function putEntry(entry: PutEntry): PutResult {
    const injected = failureFor(entry);
    if (injected) return injected;
    if (!entry.Source) return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Parameter Source is not valid. Reason: Source is a required argument.' };
    if (!entry.DetailType)
      return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Parameter DetailType is not valid. Reason: DetailType is a required argument.' };
    let detail: unknown;
    try {
      detail = JSON.parse(entry.Detail ?? '');
    } catch {
      detail = undefined;
    }
    if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
    const busName = busNameOf(entry.EventBusName ?? 'default');
    if (!buses.has(busName)) return { ErrorCode: 'ResourceNotFoundException', ErrorMessage: `Event bus ${busName} does not exist.` };
    const event: EventBridgeEvent = {
      version: '0',
      id: randomUUID(),
      'detail-type': entry.DetailType,
      source: entry.Source,
      account,
      time: isoSeconds(entry.Time !== undefined ? entry.Time * 1000 : clock.now()),
      region,
      resources: entry.Resources ?? [],
      detail,
    };
    accepted.push({ busName, event, acceptedAt: clock.now() });
    for (const rule of rules) {
      if (rule.busName !== busName || !rule.matches(event)) continue;
      for (const target of rule.targets) deliver(rule, target, event);
    }
    return { EventId: event.id };
  }

  function putEvents(entries: PutEntry[]): PutResult[] {
    if (entries.length < 1 || entries.length > MAX_ENTRIES) {
      throw new AwsFakeError(
        400,
        'ValidationException',
        `1 validation error detected: 'entries' must have between 1 and ${MAX_ENTRIES} members, got ${entries.length}`,
      );
    }
    if (entries.reduce((n, e) => n + entrySize(e), 0) > MAX_REQUEST_BYTES) {
      throw new AwsFakeError(400, 'ValidationException', 'Total size of the entries in the request is over the limit.');
    }
    const results = entries.map(putEntry);
    calls.push({ entries: structuredClone(entries), results });
    return results;
  }

  function handle(request: FakeRequest): FakeResponse {
    const operation = request.headers['x-amz-target'];
    if (request.method !== 'POST' || operation !== 'AWSEvents.PutEvents') {
      throw new AwsFakeError(400, 'UnknownOperationException', `the EventBridge fake implements only AWSEvents.PutEvents, not ${String(operation)}`);
    }
    if (request.headers['content-type'] !== 'application/x-amz-json-1.1') {
      throw new AwsFakeError(400, 'SerializationException', `EventBridge speaks AWS JSON 1.1, got content-type ${String(request.headers['content-type'])}`);
    }
    const body = jsonBody(request);
    const entries = Array.isArray(body.Entries) ? (body.Entries as PutEntry[]) : [];
    const results = putEvents(entries);
    return {
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.1' },
      body: { FailedEntryCount: results.filter((r) => r.ErrorCode).length, Entries: results },
    };
  }

  const server = await startFakeServer(handle, (error) => ({
    status: error.status,
    headers: { 'content-type': 'application/x-amz-json-1.1' },
    body: { __type: error.code, message: error.message },
  }));

  return {
    endpoint: server.endpoint,
    region,
    account,
    rules,
    calls,
    accepted,
    deliveries,
    busArn: (name) => `arn:aws:events:${region}:${account}:event-bus/${name}`,
    onTarget: (key, handler) => void handlers.set(key, handler),
    failEntries: (failure) => void failures.push({ ...failure, left: failure.times ?? 1 }),
    putEvents,
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settle();
      }),
    close: () => server.close(),
  };
}
