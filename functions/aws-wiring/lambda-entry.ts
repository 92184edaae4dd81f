// A Lambda entry point: the handler and its deps are built on the first invocation of the
// container and kept for the next ones. A build that fails (a missing variable) is tried again
// on the next invocation, and fails it with the same one line.
import type { LambdaHandler } from '../lambda/event-handler.ts';

/** `build`'s value, made on the first call and kept; a build that threw is tried again on the next. */
export function once<T>(build: () => T): () => T {
  let value: { it: T } | undefined;
  return () => (value ??= { it: build() }).it;
}

export function lambdaEntry<D, R>(build: () => D, create: (deps: D) => LambdaHandler<R>): LambdaHandler<R> {
  const handler = once(() => create(build()));
  return async (event, context) => handler()(event, context);
}
