// Waits under a minute. EventBridge Scheduler fires anywhere in the minute after its time, too
// coarse for the 0.5–30 s waits of the evidence rule, elections and the grace window. So a short
// wait is an SQS message with a per-message DelaySeconds on a standard queue (FIFO queues ignore
// per-message delays), carried back onto the bus by an EventBridge Pipe.
//
// The Pipe contract (infra/cdk/short-wait-pipe.ts builds it; test/support/fakes/pipe-fake.ts runs it,
// and reads it back from the synthesized template):
// - Source: the short-wait queue (standard SQS, no queue-level DeliveryDelay), batch size 1; a
//   message the Pipe cannot put on the bus returns to the queue, then goes to its redrive DLQ.
// - Target: the remediation event bus (its ARN); no enrichment, no filter.
// - TargetParameters.EventBridgeEventBusParameters: DetailType = "RetryDue" and Source =
//   EVENT_SOURCE ("etcd-remediator"), both literal: whoever may send to the queue can only ever
//   cause a RetryDue, never an approval. So only RetryDue may take this path (shortWaitMessage).
// - TargetParameters.InputTemplate: the RetryDue detail spelled out field by field from the body's
//   detail (Pipes parses a JSON body), strings in quotes and the attempt number without. Not the
//   bare "<$.body.detail>": a template of one path to a JSON object loses the object's inner quotes
//   and fails delivery to an event bus (User Guide, "Amazon EventBridge Pipes input
//   transformation", "Common issues with transforming input").
// The body is `{"detailType": "RetryDue", "detail": {...}}` (shortWaitBody); its detailType is
// for people reading the queue, the Pipe does not take it.
//
// A short wait cannot be cancelled (SQS cannot delete a message it has not yet delivered). That is
// safe: a RetryDue for an attempt the incident has moved past is skipped as stale by every step.
import type { SendMessageCommandInput } from '@aws-sdk/client-sqs';
import { EVENT_SOURCE, type DetailType } from '../../../events/catalogue.ts';
import type { ScheduledEvent } from '../../ports/scheduler.ts';

/** RetryDue's detail, field by field, with how the template must carry each (events/schemas/retry.ts). */
export const RETRY_DUE_FIELDS = { incidentId: 'string', clusterId: 'string', attempt: 'number', at: 'string', reason: 'string' } as const;

/** Strings in quotes, the number without: Pipes writes each as JSON needs it. */
const retryDueTemplate = (): string =>
  `{${Object.entries(RETRY_DUE_FIELDS)
    .map(([field, type]) => (type === 'string' ? `"${field}": "<$.body.detail.${field}>"` : `"${field}": <$.body.detail.${field}>`))
    .join(', ')}}`;

/** What the Pipe must be told, as data, so the stack and the fake read the same values. */
export const SHORT_WAIT_PIPE = {
  source: EVENT_SOURCE,
  detailType: 'RetryDue',
  inputTemplate: retryDueTemplate(),
} as const satisfies { source: string; detailType: DetailType; inputTemplate: string };

export interface ShortWaitBody {
  detailType: string;
  detail: unknown;
}

export const shortWaitBody = (event: ScheduledEvent): string => JSON.stringify({ detailType: event.detailType, detail: event.detail } satisfies ShortWaitBody);

/**
 * Whole seconds, rounded up so a retry never fires early: 0 for a wait already due, at most 60
 * for a wait just under the minute (SQS takes up to 900).
 */
export const delaySeconds = (waitMs: number): number => Math.max(0, Math.ceil(waitMs / 1000));

export function shortWaitMessage(queueUrl: string, event: ScheduledEvent, waitMs: number): SendMessageCommandInput {
  // The Pipe would turn any other event into a RetryDue, so refuse rather than change it.
  if (event.detailType !== SHORT_WAIT_PIPE.detailType) {
    throw new TypeError(`a ${event.detailType} cannot wait under 60 s: the short-wait Pipe puts only ${SHORT_WAIT_PIPE.detailType} on the bus`);
  }
  return { QueueUrl: queueUrl, MessageBody: shortWaitBody(event), DelaySeconds: delaySeconds(waitMs) };
}
