// A Lambda entry point: the handler and its deps are built on the first invocation of the
// container and kept for the next ones. A build that fails (a missing variable) is tried again
// on the next invocation, and fails it with the same one line.
import type { LambdaHandler } from '../lambda/event-handler.ts';

export function lambdaEntry<D, R>(build: () => D, create: (deps: D) => LambdaHandler<R>): LambdaHandler<R> {
  let handler: LambdaHandler<R> | undefined;
  return async (event, context) => {
    handler ??= create(build());
    return handler(event, context);
  };
}
