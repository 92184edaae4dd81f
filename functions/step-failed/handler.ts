// step-failed: the on-failure destination of the pipeline functions. Lambda hands it the record of
// an event whose every try failed; the incident is resumed at its next attempt or blocked
// STEP_FAILED, in the same words as the local runtime. A record it cannot act on is a dead letter.
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Deps } from '../app/common/index.ts';
import { lastDeliveryFailed } from '../app/incident/index.ts';
import { readInvocationRecord } from '../aws-wiring/invocation-record.ts';
import { createLogger, type LambdaHandler } from '../lambda/event-handler.ts';
import { payloadOf } from '../../events/validate.ts';

/**
 * Failures no resume can fix, as the local runtime's bus tells them (infra/runtime/runtime.ts,
 * retryable): an invalid event is a dead letter already, and a cluster the directory does not
 * know would fail every time.
 */
const BEYOND_RESUME = new Set(['InvalidEventError', 'UnknownClusterError']);

export type StepFailedResult = Awaited<ReturnType<typeof lastDeliveryFailed>> | 'not-resumable' | 'unreadable';

export function createStepFailedHandler(deps: Deps): LambdaHandler<StepFailedResult> {
  const logger = deps.log instanceof Logger ? deps.log : createLogger('step-failed');
  const invocationDeps: Deps = { ...deps, log: logger };
  return middy()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .handler(async (record: unknown): Promise<StepFailedResult> => {
      const read = readInvocationRecord(record);
      if (!read.ok) {
        const dead = await deps.store.putDeadLetter({
          receivedAt: deps.clock.now(),
          source: 'step-failed handler',
          detailType: 'unknown',
          payload: payloadOf(record),
          error: read.problem,
        });
        logger.error('failure record not read', { problem: read.problem, deadLetterId: dead.id });
        return 'unreadable';
      }
      const { functionName, event, error, errorType } = read.delivery;
      logger.appendKeys({
        functionName,
        detailType: event.detailType,
        ...('incidentId' in event.detail && event.detail.incidentId ? { incidentId: event.detail.incidentId } : {}),
      });
      if (errorType && BEYOND_RESUME.has(errorType)) {
        logger.warn('failed for good; nothing to resume', { error });
        return 'not-resumable';
      }
      return lastDeliveryFailed(invocationDeps, functionName, event, error);
    });
}
