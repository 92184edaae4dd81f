// Each function's handler, built from its deps, by function name: what the local runtime runs, and
// what tests standing in for Lambda containers build. The Lambda bundles never import this: each
// imports its own handler only.
import { functionNames, type EventEnvelope, type FunctionName } from '../../events/catalogue.ts';
import type { ClusterDeps } from '../../functions/app/common/index.ts';
import { createMoveLeaderHandler } from '../../functions/move-leader/handler.ts';
import { createProbeMembersHandler } from '../../functions/probe-members/handler.ts';
import { createRemediateHandler } from '../../functions/remediate/handler.ts';
import { createScheduleRetryHandler } from '../../functions/schedule-retry/handler.ts';
import type { LambdaHandler } from '../../functions/lambda/event-handler.ts';
import type { FunctionHandlers } from '../../functions/adapters/local/in-process-bus.ts';

export type HandlerFactory = (deps: ClusterDeps) => LambdaHandler<unknown>;

export const handlerFactories: Record<FunctionName, HandlerFactory> = {
  'probe-members': createProbeMembersHandler,
  'move-leader': createMoveLeaderHandler,
  'schedule-retry': createScheduleRetryHandler,
  remediate: createRemediateHandler,
};

/** The bus's handlers: `invoke(name, create)` makes each function's, as its caller runs them. */
export const busHandlers = (invoke: (name: FunctionName, create: HandlerFactory) => (event: EventEnvelope) => Promise<void>): FunctionHandlers =>
  Object.fromEntries(functionNames.map((name) => [name, invoke(name, handlerFactories[name])]));
