// Test support: each function of the synthesized stack as a warm Lambda container, one long-lived
// Node process running its built bundle, invoked asynchronously as EventBridge invokes Lambda.
//
// What it models, from the Lambda Developer Guide:
// - "Invoking a Lambda function asynchronously": a function that returns an error is tried again,
//   by default two more times, about one minute after the first try and two minutes after the
//   second; every try of one invocation has the same request id.
// - "Configuring error handling for asynchronous invocation": the function's EventInvokeConfig
//   sets the retries (MaximumRetryAttempts, 0 to 2) and the maximum event age
//   (MaximumEventAgeInSeconds, 60 to 21600; 6 hours by default); an event whose next try would
//   come past its age is discarded, and either way the record goes to the on-failure destination
//   ("Capturing records of Lambda asynchronous invocations": RetriesExhausted or EventAgeExceeded).
// The waits and the age are compressible together (compression.ts), so their ratio stays as
// deployed.
import { randomUUID } from 'node:crypto';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { compress } from '../fakes/compression.ts';
import type { FailedInvocation } from './invocation-record.ts';

const CHILD = fileURLToPath(new URL('./lambda-child.ts', import.meta.url));

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string; errorType: string; errorMessage: string };

export interface Invocation {
  functionName: string;
  event: unknown;
  /** 1 for the first try, up to 1 + the retries. */
  attempt: number;
  /** When the try started, epoch ms. */
  at: number;
  ok: boolean;
  error?: string;
}

export interface LambdaContainer {
  readonly functionName: string;
  readonly pid: number;
  /** As EventBridge invokes a target: resolves once the event was handled, retried, or given up. */
  invokeAsync(event: unknown): Promise<void>;
  /** Kills the container mid-flight, as a crash would; the next invocation starts a fresh one. */
  crash(): void;
  close(): Promise<void>;
}

export interface HostOptions {
  env: NodeJS.ProcessEnv;
  /** Every try of every invocation, in order. */
  log: Invocation[];
  /** The function's ARN, as its failure records name it. */
  functionArn: string;
  /** Where an invocation goes after its last failed try; awaited, as the destination takes the record. */
  onFailure: (failed: FailedInvocation & { functionName: string; error: string }) => void | Promise<void>;
  /** The function's EventInvokeConfig (default: Lambda's own, 2 retries and 6 hours). */
  eventInvokeConfig?: EventInvokeConfig;
  /** The waits before the first and the second retry, before compression (default: Lambda's). */
  retryDelaysMs?: readonly [number, number];
  /** Divides the retry waits and the maximum event age alike (compression.ts). */
  compression?: number;
}

export interface EventInvokeConfig {
  maximumRetryAttempts?: number;
  maximumEventAgeInSeconds?: number;
}

/** As documented: about one minute before the second try, two before the third. */
export const LAMBDA_RETRY_DELAYS_MS = [60_000, 120_000] as const;
/** Lambda's defaults for an asynchronous invocation without an EventInvokeConfig. */
export const LAMBDA_ASYNC_DEFAULTS = { maximumRetryAttempts: 2, maximumEventAgeInSeconds: 21_600 } as const;

/** The documented ranges: 0 to 2 retries, 60 s to 6 hours of age. */
export function checkedInvokeConfig(config: EventInvokeConfig = {}): Required<EventInvokeConfig> {
  const {
    maximumRetryAttempts: retries = LAMBDA_ASYNC_DEFAULTS.maximumRetryAttempts,
    maximumEventAgeInSeconds: age = LAMBDA_ASYNC_DEFAULTS.maximumEventAgeInSeconds,
  } = config;
  if (!Number.isInteger(retries) || retries < 0 || retries > 2) throw new RangeError(`MaximumRetryAttempts must be an integer from 0 to 2, got ${retries}`);
  if (!Number.isInteger(age) || age < 60 || age > 21_600) throw new RangeError(`MaximumEventAgeInSeconds must be an integer from 60 to 21600, got ${age}`);
  return { maximumRetryAttempts: retries, maximumEventAgeInSeconds: age };
}

export async function startContainer(functionName: string, bundle: string, options: HostOptions): Promise<LambdaContainer> {
  const { maximumRetryAttempts, maximumEventAgeInSeconds } = checkedInvokeConfig(options.eventInvokeConfig);
  const delays = (options.retryDelaysMs ?? LAMBDA_RETRY_DELAYS_MS).map((ms) => compress(ms, options.compression));
  const maxAgeMs = compress(maximumEventAgeInSeconds * 1000, options.compression);
  let child: ChildProcess | undefined;
  let nextId = 1;
  // Each invocation in flight, with the container it went to: a crash fails only its own.
  const pending = new Map<number, { requestId: string; container: ChildProcess; settle: (reply: Reply) => void }>();

  /** Ends an invocation in flight as Lambda reports a runtime that exited under it. */
  const failAsExited = (id: number, how: string): void => {
    const entry = pending.get(id);
    if (!entry) return;
    pending.delete(id);
    const errorMessage = `RequestId: ${entry.requestId} Error: Runtime exited with error: ${how}`;
    entry.settle({ id, ok: false, error: `Runtime.ExitError: ${errorMessage}`, errorType: 'Runtime.ExitError', errorMessage });
  };

  const start = () =>
    new Promise<ChildProcess>((resolve, reject) => {
      const c = fork(CHILD, [bundle, functionName], { env: options.env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      c.once('error', reject);
      c.on('message', (message: Reply | { ready: true }) => {
        if ('ready' in message) return resolve(c);
        pending.get(message.id)?.settle(message);
        pending.delete(message.id);
      });
      c.once('exit', (code, signal) => {
        // A crash fails every invocation in flight on it, as Lambda reports a runtime exit.
        const how = signal === 'SIGKILL' ? 'signal: killed' : signal ? `signal: ${signal}` : `exit status ${code}`;
        for (const [id, { container }] of pending) if (container === c) failAsExited(id, how);
        if (child === c) child = undefined;
      });
    });

  const invokeOnce = async (event: unknown, requestId: string): Promise<Reply> => {
    // A container killed a moment ago has lost its channel before its exit is reported: start afresh.
    if (child && !child.connected) child = undefined;
    const container = (child ??= await start());
    const id = nextId++;
    const reply = new Promise<Reply>((resolve) => pending.set(id, { requestId, container, settle: resolve }));
    // The channel can still close between the check and the send (a crash mid-flight): that try
    // fails as Lambda reports a runtime that exited, never as an error thrown into the caller.
    container.send({ id, event, requestId }, (error) => error && failAsExited(id, error.message));
    return reply;
  };

  child = await start();
  return {
    functionName,
    get pid() {
      return child?.pid ?? -1;
    },
    async invokeAsync(event) {
      let last: Extract<Reply, { ok: false }> | undefined;
      // Lambda retries an asynchronous invocation under the request id of its first try.
      const requestId = randomUUID();
      const queuedAt = performance.now();
      let tries = 0;
      let condition: NonNullable<FailedInvocation['condition']> = 'RetriesExhausted';
      for (;;) {
        const at = Date.now();
        const reply = await invokeOnce(event, requestId);
        tries++;
        options.log.push({ functionName, event, attempt: tries, at, ok: reply.ok, ...(reply.ok ? {} : { error: reply.error }) });
        if (reply.ok) return;
        last = reply;
        if (tries > maximumRetryAttempts) break;
        const wait = delays[tries - 1] ?? delays[delays.length - 1] ?? 0;
        if (performance.now() - queuedAt + wait > maxAgeMs) {
          condition = 'EventAgeExceeded';
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      const { error, errorType, errorMessage } = last;
      await options.onFailure({ functionName, functionArn: options.functionArn, requestId, tries, condition, event, error, errorType, errorMessage });
    },
    crash() {
      child?.kill('SIGKILL');
    },
    async close() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGTERM');
      await exited;
    },
  };
}
