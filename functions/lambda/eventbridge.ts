// EventBridge-shaped events for our catalogue: what a Lambda receives, and what the local runtime
// hands the very same handlers.
import { randomUUID } from 'node:crypto';
import { EventBridgeSchema } from '@aws-lambda-powertools/parser/schemas/eventbridge';
import { z } from 'zod';
import { detailSchemas, EVENT_SOURCE, type DetailType, type EventEnvelope } from '../../events/catalogue.ts';
import { inputIssues } from '../../events/validate.ts';

/** A schema accepting EventBridge events of exactly these detail types, each with its own detail. */
export function eventBridgeSchemaFor<T extends DetailType>(types: readonly T[]) {
  const variants = types.map((t) => EventBridgeSchema.extend({ source: z.literal(EVENT_SOURCE), 'detail-type': z.literal(t), detail: detailSchemas[t] }));
  // A one-variant union is fine for zod; keeping one shape makes the handler code uniform.
  const union = z.discriminatedUnion('detail-type', variants as unknown as [(typeof variants)[number], ...(typeof variants)[number][]]);
  // The detail as it arrived, before the schema strips what it does not know: a reserved key, a
  // value JSON cannot carry or an oversized field refuses the event (parseEnvelope names it).
  return z.preprocess((event, ctx) => {
    const detail = typeof event === 'object' && event !== null ? (event as { detail?: unknown }).detail : undefined;
    for (const issue of inputIssues(detail)) ctx.addIssue({ code: 'custom', path: ['detail'], message: `${issue.path}: ${issue.problem}`, input: detail });
    return event;
  }, union);
}

export interface EventBridgeEvent {
  version: string;
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: unknown;
}

/** Wraps an envelope as EventBridge would deliver it. */
export const toEventBridgeEvent = (event: { detailType: string; detail: unknown; source?: string }, region = 'local'): EventBridgeEvent => ({
  version: '0',
  id: randomUUID(),
  'detail-type': event.detailType,
  source: event.source ?? EVENT_SOURCE,
  account: '000000000000',
  time: new Date().toISOString(),
  region,
  resources: [],
  detail: event.detail,
});

/** Back from EventBridge's shape to ours, once parsed. */
export const fromEventBridgeEvent = <T extends DetailType>(event: { 'detail-type': T; detail: unknown }): EventEnvelope<T> =>
  ({ source: EVENT_SOURCE, detailType: event['detail-type'], detail: event.detail }) as EventEnvelope<T>;
