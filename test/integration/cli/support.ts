// Runs the real binary as a user would: a separate Node process, flags on the command line,
// output on stdout and stderr, an exit code.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import { WaitAborted, waitFor } from '../../../functions/lib/wait-for.ts';
import { isAlive } from '../../../infra/lab/pids.ts';

export const BIN = fileURLToPath(new URL('../../../bin/etcd-remediator.mjs', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How the binary runs: under a command that wraps it, another Node, more env. */
export interface SpawnAs {
  cwd?: string;
  /** A command the binary runs under, e.g. setpriv with its options. */
  wrapper?: string[];
  node?: string;
  env?: Record<string, string>;
  /** Another entry point than the binary, e.g. the demo's script. */
  script?: string;
}

const spawnOptions = (options: SpawnAs) => ({
  cwd: options.cwd,
  ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
});

/** The program and its arguments: node and the binary, under the wrapper when there is one. */
function command(args: string[], options: SpawnAs): [string, string[]] {
  const [wrapper, ...wrapperArgs] = options.wrapper ?? [];
  const node = options.node ?? process.execPath;
  const script = options.script ?? BIN;
  return wrapper ? [wrapper, [...wrapperArgs, node, script, ...args]] : [node, [script, ...args]];
}

export function runCli(args: string[], options: SpawnAs & { timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(...command(args, options), { ...spawnOptions(options), stdio: ['ignore', 'pipe', 'pipe'] });
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
/**
 * How many of a file's CLI processes run at once, for files whose cases run side by side: each
 * spawn spends most of its life on the CPU loading the CLI, so on two cores two at once keep them
 * busy, and more only make each take longer (and run into its deadline, which starts when it is
 * spawned, not while it waits its turn).
 */
export const CLI_PROCESSES_AT_ONCE = 2;

/** runCli, at most `limit` at once among the calls of the function it returns, in the order they came. */
export function limitedRunCli(limit = CLI_PROCESSES_AT_ONCE): (args: string[], options?: SpawnAs & { timeoutMs?: number }) => Promise<CliRun> {
  const limited = pLimit(limit);
  return (args, options) => limited(() => runCli(args, options));
}

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
  /**
   * waitFor on `probe`, whose timeout message ends with the stderr printed by the deadline (a `what`
   * built at the call would show the stderr of the call's moment).
   */
  until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs?: number): Promise<T>;
  exited: Promise<number | null>;
}

export function startCli(args: string[], options: SpawnAs = {}): Service {
  const child = spawn(...command(args, options), { ...spawnOptions(options), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const until = <T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> =>
    waitFor(
      async () => {
        const said = (why: string) => new Error(`${why}; stderr so far:\n${stderr}`);
        const value = await Promise.resolve()
          .then(probe)
          .catch((error: unknown) => {
            if (error instanceof WaitAborted) throw error;
            throw said(error instanceof Error ? error.message : String(error));
          });
        if (value === undefined) throw said('not yet');
        return value;
      },
      { timeoutMs, what },
    );
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    until,
    waitForStderr: (pattern, timeoutMs) => until(() => pattern.exec(stderr) ?? undefined, `stderr to match ${pattern}`, timeoutMs),
  };
}

/** True while `pid` runs: a zombie left for a non-reaping init counts as gone. */
export function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\S+ \(.*\) [ZX]/s.test(stat);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !fs.existsSync('/proc/self')) return isAlive(pid);
    return false;
  }
}

/** SIGKILL for a service a test started, if it still runs; waits for it to be gone. */
export async function killService(service: Service | undefined): Promise<void> {
  if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGKILL');
  await service.exited;
}

/**
 * Spawn options under which the binary is held to file permissions as this (root) process is not:
 * root without the capabilities that override them. It stays the owner, so it reaches the checkout
 * wherever it was cloned (a 0700 temporary directory too), yet cannot write a file made read-only.
 */
export const withoutPermissionOverride = (): SpawnAs =>
  process.getuid?.() === 0 ? { wrapper: ['setpriv', '--bounding-set', '-dac_override,-dac_read_search', '--'] } : {};

/** Debian's Node, which the bin shim re-runs the CLI from when it is too old for the project. */
export const SYSTEM_NODE = '/usr/bin/node';

/** The system Node when it is older than 23.6 (the shim then re-runs the CLI under Node 24); undefined otherwise. */
export function olderNode(): string | undefined {
  try {
    const [major = 0, minor = 0] = execFileSync(SYSTEM_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim().split('.').map(Number);
    return major < 23 || (major === 23 && minor < 6) ? SYSTEM_NODE : undefined;
  } catch {
    return undefined;
  }
}

/** POSTs a body to run's Unix socket; the HTTP status. */
export const postToSocket = (socketPath: string, body: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = http.request({ socketPath, path: '/events', method: 'POST' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
