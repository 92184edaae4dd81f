// Which invocation the work runs in, without threading it through every call: the Lambda request
// id. Lambda retries a failed asynchronous invocation under the same request id, so a step lease
// held under that id was held by an invocation that has ended: its retry may take it over.
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<string>();

/** Runs `work` as the invocation `requestId`. */
export const asInvocation = <R>(requestId: string, work: () => Promise<R>): Promise<R> => current.run(requestId, work);

/** The request id of the invocation running now; undefined outside Lambda (the local runtime). */
export const currentInvocation = (): string | undefined => current.getStore();
