// Cold starts, each in a fresh Node process (child.ts), one after another so they do not share the
// two cores: the median of several. The environment is the function's own from the template, its
// references filled with dummies, and every AWS endpoint pointed at a loopback port nobody listens
// on, with static credentials and one SDK attempt: the first call fails fast, and nothing leaves
// the machine (no instance-metadata lookup either).
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { MARKER, type ChildResult } from './protocol.ts';

const CHILD = new URL('./child.ts', import.meta.url).pathname;

import { median } from '../../../functions/core/common/collections.ts';

export { median };

/** A loopback port that refuses connections: bound, read and closed again. */
export async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const DUMMIES: Record<string, (endpoint: string) => string> = {
  BUS_ARN: () => 'arn:aws:events:us-east-1:000000000000:event-bus/etcd-remediator-bench',
  SCHEDULER_ROLE_ARN: () => 'arn:aws:iam::000000000000:role/etcd-remediator-bench-scheduler',
  SCHEDULER_DLQ_ARN: () => 'arn:aws:sqs:us-east-1:000000000000:etcd-remediator-bench-dlq',
  SHORT_WAIT_QUEUE_URL: (endpoint) => `${endpoint}/000000000000/etcd-remediator-bench-short-waits`,
};

/** The function's environment as Lambda would set it, with no way to reach AWS. */
export function benchEnv(name: string, environment: Record<string, unknown>, endpoint: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    AWS_LAMBDA_FUNCTION_NAME: name,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDBENCH',
    AWS_SECRET_ACCESS_KEY: 'bench-secret',
    AWS_ENDPOINT_URL: endpoint,
    AWS_MAX_ATTEMPTS: '1',
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  for (const [key, value] of Object.entries(environment)) {
    // Strings are as deployed (NODE_OPTIONS, POLICY_DEFAULTS…); CloudFormation references get a dummy.
    env[key] = typeof value === 'string' ? value : (DUMMIES[key]?.(endpoint) ?? `etcd-remediator-bench-${key.toLowerCase()}`);
  }
  return env;
}

export interface ColdStartRun {
  file: string;
  functionName: string;
  /** Omit for an import alone. */
  event?: unknown;
  /** A chunk imported after the call, timed apart (ChildResult.laterMs). */
  later?: string;
  env: Record<string, string>;
}

export function coldStart(run: ColdStartRun): Promise<ChildResult> {
  const args = [CHILD, run.file, run.event === undefined ? '' : JSON.stringify(run.event), run.functionName, ...(run.later ? [run.later] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: run.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith(MARKER));
      if (code !== 0 || !line) reject(new Error(`cold start of ${run.file} exited ${code}:\n${stderr || stdout}`));
      else resolve(JSON.parse(line.slice(MARKER.length)) as ChildResult);
    });
  });
}

/** `runs` cold starts in a row; the median of each figure and the outcomes seen. */
export async function coldStarts(run: ColdStartRun, runs: number): Promise<{ importMs: number; callMs: number; totalMs: number; outcomes: string[] }> {
  const results: ChildResult[] = [];
  for (let i = 0; i < runs; i++) results.push(await coldStart(run));
  return {
    importMs: median(results.map((r) => r.importMs)),
    callMs: median(results.map((r) => r.callMs)),
    totalMs: median(results.map((r) => r.importMs + r.callMs)),
    outcomes: [...new Set(results.map((r) => r.outcome))],
  };
}
