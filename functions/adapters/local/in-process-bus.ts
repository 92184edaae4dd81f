// The local bus: validates at the edge, then routes by the catalogue to handlers in this process.
import { routes, type DetailTypesFor, type EventEnvelope, type FunctionName } from '../../../events/catalogue.ts';
import { parseEnvelope, type EventParseError } from '../../../events/validate.ts';
import type { Bus } from '../../ports/bus.ts';

// Captured at load: dispatch order is not a timer, so tests that fake timers must not stall the bus.
const nextTurn = setImmediate;

export type FunctionHandler<F extends FunctionName> = (event: EventEnvelope<DetailTypesFor<F>>) => Promise<void>;
export type FunctionHandlers = { [F in FunctionName]?: FunctionHandler<F> };

export interface DeadLetter {
  /** What was published, as it was published. */
  event: unknown;
  error: EventParseError;
}

export interface BusFailure {
  /** The handler that threw, or 'subscriber' for an observer. */
  functionName: FunctionName | 'subscriber';
  event: EventEnvelope;
  error: unknown;
}

export interface InProcessBusOptions {
  /** Functions missing here are not run in this process; their events are still seen by subscribers. */
  handlers: FunctionHandlers;
  onDeadLetter: (dead: DeadLetter) => void;
  /** A handler failed on its last delivery (or a subscriber threw). */
  onError: (failure: BusFailure) => void;
  /**
   * As Lambda retries an asynchronous invocation: a handler that throws gets the same event again
   * after each of these delays; `onError` hears of it once the last one failed too.
   */
  redeliveryDelaysMs?: readonly number[];
  /** Errors worth a redelivery; by default every one. */
  retryable?: (error: unknown) => boolean;
}

export interface InProcessBus extends Bus {
  /** Resolves when no handler is queued or running, chained publishes included. */
  drain(options?: { timeoutMs?: number }): Promise<void>;
  /** Sees every valid published event, before any handler runs. Returns the unsubscribe. Needs no `this`. */
  subscribe: (observer: (event: EventEnvelope) => void) => () => void;
  /** Handlers queued, running or waiting for a redelivery right now. */
  readonly inFlight: number;
  /** Drops the redeliveries still waiting: what they would have done is left to the recovery sweep. */
  close(): void;
}

export function createInProcessBus(options: InProcessBusOptions): InProcessBus {
  const { handlers, onDeadLetter, onError } = options;
  const delays = options.redeliveryDelaysMs ?? [];
  const retryable = options.retryable ?? (() => true);
  const observers = new Set<(event: EventEnvelope) => void>();
  const waiting = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  const settle = () => {
    inFlight -= 1;
    if (inFlight > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  };

  const dispatch = (functionName: FunctionName, event: EventEnvelope, delivery = 0) => {
    // The catalogue guarantees the detail type is routed to this function; the map type cannot say so.
    const handler = handlers[functionName] as ((event: EventEnvelope) => Promise<void>) | undefined;
    if (!handler) return;
    inFlight += 1;
    // Never inside publish: a handler that publishes must not run its successors on its own stack.
    nextTurn(() => {
      Promise.resolve()
        .then(() => handler(event))
        .catch((error: unknown) => {
          const delay = delays[delivery];
          if (delay === undefined || !retryable(error)) return onError({ functionName, event, error });
          // Counted as in flight while it waits, so drain() means nothing is owed.
          inFlight += 1;
          const timer = setTimeout(() => {
            waiting.delete(timer);
            dispatch(functionName, event, delivery + 1);
            settle();
          }, delay);
          waiting.add(timer);
        })
        .finally(settle);
    });
  };

  const notify = (event: EventEnvelope) => {
    for (const observer of observers) {
      try {
        observer(event);
      } catch (error) {
        onError({ functionName: 'subscriber', event, error });
      }
    }
  };

  return {
    get inFlight() {
      return inFlight;
    },

    async publish(...events) {
      for (const raw of events) {
        const parsed = parseEnvelope(raw);
        if (!parsed.ok) {
          onDeadLetter({ event: raw, error: parsed.error });
          continue;
        }
        const event = parsed.event;
        notify(event);
        for (const functionName of routes[event.detailType]) dispatch(functionName, event);
      }
    },

    drain({ timeoutMs }: { timeoutMs?: number } = {}) {
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer =
          timeoutMs === undefined
            ? undefined
            : setTimeout(() => {
                idleWaiters = idleWaiters.filter((w) => w !== wake);
                reject(new Error(`bus did not drain within ${timeoutMs} ms; ${inFlight} handler(s) still in flight`));
              }, timeoutMs);
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        idleWaiters.push(wake);
      });
    },

    close() {
      for (const timer of waiting) {
        clearTimeout(timer);
        settle();
      }
      waiting.clear();
    },

    subscribe(observer) {
      observers.add(observer);
      return () => {
        observers.delete(observer);
      };
    },
  };
}
