// intake: outside health signals (EC2 state change, StatusCheckFailed alarm, AWS Health, a
// MemberUnhealthy sent to it) in; MemberUnhealthy on our bus out. It parses each source itself:
// a refused signal is a dead letter, not a thrown error, since no retry could make it readable.
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { intake, type IntakeDeps, type IntakeResult } from '../app/intake/index.ts';
import { createLogger, type LambdaHandler } from '../lambda/event-handler.ts';

export function createIntakeHandler(deps: IntakeDeps): LambdaHandler<IntakeResult> {
  const logger = deps.log instanceof Logger ? deps.log : createLogger('intake');
  const invocationDeps: IntakeDeps = { ...deps, log: logger };
  return middy()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .handler((event: unknown) => intake(invocationDeps, event));
}
