// The one shape every function's handler takes: middy, Powertools Logger and Parser, and a
// dead-letter record for any event that fails validation at the edge.
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { subscriptionsOf, workOf, type DetailOfWork, type DetailTypesFor, type FunctionName, type WorksOf } from '../../events/catalogue.ts';
import { parseEnvelope, payloadOf } from '../../events/validate.ts';
import type { Deps } from '../app/common/index.ts';
import { eventBridgeSchemaFor, fromEventBridgeEvent } from './eventbridge.ts';
import { asInvocation } from '../lib/invocation.ts';

/** Thrown for an event that fails validation; the message names the field and the problem. */
export class InvalidEventError extends Error {
  readonly deadLetterId: string;
  constructor(summary: string, deadLetterId: string) {
    super(summary);
    this.name = 'InvalidEventError';
    this.deadLetterId = deadLetterId;
  }
}

export const createLogger = (serviceName: string): Logger => new Logger({ serviceName });

/** What Lambda (or the local runtime) calls: raw JSON in, the work's result out. */
export type LambdaHandler<R> = (event: unknown, context: Context) => Promise<R>;

/** What a function does with each work it hosts (the catalogue's `works`): one entry a work, no other dispatch. */
export type WorkTable<F extends FunctionName, D extends Deps = Deps> = { [W in WorksOf<F>]: (deps: D, detail: DetailOfWork<W>) => Promise<unknown> };

/** What a function's handler returns: whatever its works return. */
type WorkResult<T> = { [W in keyof T]: T[W] extends (...args: never[]) => Promise<infer R> ? R : never }[keyof T];

/**
 * The handler's Powertools logger is the one logger of the invocation: the work logs through it
 * (as deps.log), so every line carries the Lambda context, and the incident id once the event is
 * parsed. A deps.log that is not a Powertools Logger (a test's silent one) is wrapped by a new one.
 * The event goes to the work the catalogue routes it to (`workOf`), from the function's table.
 */
export function eventHandler<F extends FunctionName, D extends Deps, T extends WorkTable<F, D>>(
  functionName: F,
  deps: D,
  table: T,
): LambdaHandler<WorkResult<T>> {
  const logger = deps.log instanceof Logger ? deps.log : createLogger(functionName);
  const invocationDeps: D = { ...deps, log: logger };
  const schema = eventBridgeSchemaFor(subscriptionsOf(functionName));
  const handler = middy()
    // resetKeys: the incident id appended below is this invocation's only.
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(parser({ schema, safeParse: true }))
    .handler(async (parsed, context: Context) => {
      if (!parsed.success) {
        const raw = parsed.originalEvent as { 'detail-type'?: unknown; source?: unknown; detail?: unknown };
        const checked = parseEnvelope({ source: raw?.source, detailType: raw?.['detail-type'], detail: raw?.detail });
        const summary = checked.ok ? `${functionName} does not take ${String(raw?.['detail-type'])} events` : checked.error.summary;
        const dead = await deps.store.putDeadLetter({
          receivedAt: deps.clock.now(),
          source: `${functionName} handler`,
          detailType: typeof raw?.['detail-type'] === 'string' ? raw['detail-type'] : 'unknown',
          payload: payloadOf(parsed.originalEvent),
          error: summary,
        });
        logger.error('invalid event', { summary, deadLetterId: dead.id });
        throw new InvalidEventError(summary, dead.id);
      }
      const event = fromEventBridgeEvent(parsed.data as { 'detail-type': DetailTypesFor<F>; detail: unknown });
      const { incidentId, attempt } = event.detail as { incidentId?: string; attempt?: number };
      logger.appendKeys({ ...(incidentId ? { incidentId } : {}), ...(attempt !== undefined ? { attempt } : {}) });
      const run = table[workOf(event) as WorksOf<F>] as (deps: D, detail: unknown) => Promise<WorkResult<T>>;
      // A test's or the local runtime's call may come without a request id.
      return context?.awsRequestId ? asInvocation(context.awsRequestId, () => run(invocationDeps, event.detail)) : run(invocationDeps, event.detail);
    });
  // The parser types the event after parsing; the caller hands over raw JSON, as Lambda does.
  return handler as unknown as LambdaHandler<WorkResult<T>>;
}
