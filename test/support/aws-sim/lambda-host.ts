// Test support: each function of the synthesized stack as a warm Lambda container, one long-lived
// Node process running its built bundle, invoked asynchronously as EventBridge invokes Lambda:
// a failed invocation is retried twice, then handed to the on-failure destination.
import { randomUUID } from 'node:crypto';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FailedInvocation } from './invocation-record.ts';

const CHILD = fileURLToPath(new URL('./lambda-child.ts', import.meta.url));

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string; errorType: string; errorMessage: string };

export interface Invocation {
  functionName: string;
  event: unknown;
  /** 1 for the first try, up to 3. */
  attempt: number;
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
  retryDelayMs?: number;
}

export async function startContainer(functionName: string, bundle: string, options: HostOptions): Promise<LambdaContainer> {
  let child: ChildProcess | undefined;
  let nextId = 1;
  const pending = new Map<number, { requestId: string; settle: (reply: Reply) => void }>();

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
        // A crash fails every invocation in flight, as Lambda reports a runtime exit.
        const how = signal === 'SIGKILL' ? 'signal: killed' : signal ? `signal: ${signal}` : `exit status ${code}`;
        for (const [id, { requestId, settle }] of pending) {
          const errorMessage = `RequestId: ${requestId} Error: Runtime exited with error: ${how}`;
          settle({ id, ok: false, error: `Runtime.ExitError: ${errorMessage}`, errorType: 'Runtime.ExitError', errorMessage });
        }
        pending.clear();
        if (child === c) child = undefined;
      });
    });

  const invokeOnce = async (event: unknown, requestId: string): Promise<Reply> => {
    child ??= await start();
    const id = nextId++;
    const reply = new Promise<Reply>((resolve) => pending.set(id, { requestId, settle: resolve }));
    child.send({ id, event, requestId });
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
      for (let attempt = 1; attempt <= 3; attempt++) {
        const reply = await invokeOnce(event, requestId);
        options.log.push({ functionName, event, attempt, ok: reply.ok, ...(reply.ok ? {} : { error: reply.error }) });
        if (reply.ok) return;
        last = reply;
        await new Promise((resolve) => setTimeout(resolve, options.retryDelayMs ?? 200));
      }
      const { error, errorType, errorMessage } = last!;
      await options.onFailure({ functionName, functionArn: options.functionArn, requestId, tries: 3, event, error, errorType, errorMessage });
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
