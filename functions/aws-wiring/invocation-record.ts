// Lambda's on-failure destination hands the destination function an invocation record: the event
// that failed every try (requestPayload), why Lambda gave up (requestContext.condition: its
// retries spent, or the event too old in its queue), and the function's last error
// (responsePayload). The format is AWS's, "Capturing records of Lambda asynchronous invocations":
//   { version, timestamp, requestContext: { requestId, functionArn, condition, approximateInvokeCount },
//     requestPayload, responseContext: { statusCode, executedVersion, functionError },
//     responsePayload: { errorMessage, errorType, stackTrace } }
import { z } from 'zod';
import { routesOf, type EventEnvelope, type FunctionName } from '../../events/catalogue.ts';
import { parseEnvelope } from '../../events/validate.ts';

const recordSchema = z.object({
  version: z.string(),
  timestamp: z.string(),
  requestContext: z.object({ requestId: z.string(), functionArn: z.string(), condition: z.string(), approximateInvokeCount: z.number() }),
  requestPayload: z.unknown(),
  // Absent when the event expired before any try answered.
  responseContext: z.object({ statusCode: z.number(), functionError: z.string().optional() }).optional(),
  responsePayload: z.unknown().optional(),
});

const errorSchema = z.object({ errorMessage: z.string().optional(), errorType: z.string().optional() });

export interface FailedDelivery {
  /** The pipeline function the event was routed to: the step that failed. */
  functionName: FunctionName;
  event: EventEnvelope;
  /** The function's last error, as its message said it (the local runtime says the same). */
  error: string;
  /** The error's name (errorType), when Lambda gave one: some failures no retry can fix. */
  errorType?: string;
}

export type ReadRecord = { ok: true; delivery: FailedDelivery } | { ok: false; problem: string };

/** What a failure record says, or why it says nothing this stack can act on. */
export function readInvocationRecord(input: unknown): ReadRecord {
  const record = recordSchema.safeParse(input);
  if (!record.success)
    return {
      ok: false,
      problem: `not a Lambda invocation record (${record.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; ')})`,
    };
  const { requestContext: context, requestPayload: payload } = record.data;
  const raw = (typeof payload === 'object' && payload !== null ? payload : {}) as { source?: unknown; 'detail-type'?: unknown; detail?: unknown };
  const parsed = parseEnvelope({ source: raw.source, detailType: raw['detail-type'], detail: raw.detail });
  if (!parsed.ok) return { ok: false, problem: `the failed event of ${context.functionArn} is not one of ours: ${parsed.error.summary}` };
  // The event's route names the step: physical function names are CloudFormation's, not ours.
  const steps = routesOf(parsed.event.detailType);
  if (steps.length !== 1)
    return { ok: false, problem: `${parsed.event.detailType} is routed to ${steps.length} functions, so its failure record names no one step` };
  const said = errorSchema.safeParse(record.data.responsePayload);
  const { errorMessage, errorType } = said.success ? said.data : {};
  const gaveUp = `${context.condition} after ${context.approximateInvokeCount} ${context.approximateInvokeCount === 1 ? 'try' : 'tries'}`;
  return {
    ok: true,
    delivery: {
      functionName: steps[0]!,
      event: parsed.event,
      error: errorMessage || errorType || `Lambda gave up on the event (${gaveUp})`,
      ...(errorType ? { errorType } : {}),
    },
  };
}
