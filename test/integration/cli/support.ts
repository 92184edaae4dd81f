// Runs the real binary as a user would: a separate Node process, flags on the command line,
// output on stdout and stderr, an exit code.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../../functions/shared/wait-for.ts';

export const BIN = fileURLToPath(new URL('../../../bin/etcd-remediator.mjs', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`etcd-remediator ${args.join(' ')} did not finish within ${options.timeoutMs ?? 30_000} ms; stderr:\n${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Parses stdout as JSON, saying what was printed when it is not. */
export function jsonOf<T>(run: CliRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${run.code}):\n${run.stdout}\nstderr:\n${run.stderr}`);
  }
}

/** A long-running command (run): its output so far, and a way to wait on it. */
export interface Service {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

export function startCli(args: string[], options: { cwd?: string } = {}): Service {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStderr: (pattern, timeoutMs = 15_000) =>
      waitFor(async () => pattern.exec(stderr) ?? undefined, { timeoutMs, what: `stderr to match ${pattern}; so far:\n${stderr}` }),
  };
}
