// Output through a pipe arrives whole. Pipe writes are asynchronous once the pipe is full, so a
// CLI that exits right after its last write loses everything past the first 64 KiB when the reader
// is slower than the writer. Each run here reads through a pipe at a reader's own pace: a chunk,
// then a pause, then the next.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { BIN, type CliRun, olderNode } from './support.ts';

const REPO = path.resolve(path.dirname(BIN), '..');

// The lab the removal below needs, started with the file: etcd refuses a member remove for ~5 s
// after its members connect, and the status runs before it take about that long.
let labStarted: Promise<Lab> | undefined;
beforeAll(() => {
  labStarted = startLab({ members: 3, electionTimeoutMs: 500 });
  // Its failure is the removal's, reported where that awaits it.
  labStarted.catch(() => undefined);
});
afterAll(async () => {
  await (await labStarted?.catch(() => undefined))?.down();
});
/** The pause after each chunk read: slower than the writer, so the pipe fills. */
const PAUSE_MS = 5;
const DEAD_LETTERS = 300;

/** Runs a command with stdout and stderr on pipes that are read slowly. */
function runReadSlowly(command: string, args: string[], timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Record<'stdout' | 'stderr', Buffer[]> = { stdout: [], stderr: [] };
    for (const name of ['stdout', 'stderr'] as const) {
      const stream = child[name];
      stream.on('data', (chunk: Buffer) => {
        out[name].push(chunk);
        stream.pause();
        setTimeout(() => stream.resume(), PAUSE_MS);
      });
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out.stdout).toString('utf8'), stderr: Buffer.concat(out.stderr).toString('utf8') });
    });
  });
}

/** What a file gets: the whole output, the reference a pipe must match. */
function runToFile(args: string[], file: string): number {
  const fd = fs.openSync(file, 'w');
  try {
    execFileSync(process.execPath, [BIN, ...args], { cwd: REPO, stdio: ['ignore', fd, 'ignore'] });
  } finally {
    fs.closeSync(fd);
  }
  return fs.statSync(file).size;
}

describe('output through a slowly read pipe is complete', () => {
  let dir: string;
  let state: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-flushed-output-'));
    state = path.join(dir, 'large.sqlite');
    const store = openSqliteStore({ path: state });
    try {
      for (let i = 0; i < DEAD_LETTERS; i++) {
        await store.putDeadLetter({
          receivedAt: Date.now(),
          source: 'test',
          detailType: 'MemberUnhealthy',
          payload: 'x'.repeat(2_000),
          error: `dead letter ${i}`,
        });
      }
    } finally {
      await store.close();
    }
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const statusArgs = () => ['status', '--state', state, '--dead-letters', '--json'];

  const expectWhole = (run: CliRun, bytes: number) => {
    expect(run.code, run.stderr).toBe(0);
    expect(Buffer.byteLength(run.stdout)).toBe(bytes);
    expect((JSON.parse(run.stdout) as { deadLetters: unknown[] }).deadLetters).toHaveLength(DEAD_LETTERS);
  };

  it('status --json: the bytes a file gets, and JSON that parses', async () => {
    const bytes = runToFile(statusArgs(), path.join(dir, 'status.json'));
    expect(bytes).toBeGreaterThan(8 * 65_536);
    expectWhole(await runReadSlowly(process.execPath, [BIN, ...statusArgs()]), bytes);
  });

  const older = olderNode();
  it.skipIf(older === undefined)('through the bin shim on an older Node, and through npx etcd-remediator', async () => {
    const bytes = runToFile(statusArgs(), path.join(dir, 'status-shim.json'));
    // Both at once: each reads the state file only.
    const [shim, npx] = await Promise.all([
      runReadSlowly(older!, [BIN, ...statusArgs()]),
      runReadSlowly('npx', ['--no-install', 'etcd-remediator', ...statusArgs()]),
    ]);
    expectWhole(shim, bytes);
    expectWhole(npx, bytes);
  });
});

describe('remediate --json through a slowly read pipe, after a real removal', () => {
  let lab: Lab;
  let dir: string;
  beforeAll(async () => {
    lab = await labStarted!;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-flushed-remediate-'));
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints the whole result and every progress line, and still exits', async () => {
    const leader = await lab.leader();
    const follower = (await lab.memberList()).find((m) => m.id !== leader.id)!;
    const args = [
      'remediate',
      '--endpoints',
      lab.endpoints().join(','),
      '--target',
      follower.name,
      '--election-timeout',
      '500ms',
      '--timeout',
      '1s',
      '--backoff',
      '300ms',
    ];
    const run = await runReadSlowly(process.execPath, [BIN, ...args, '--state', path.join(dir, 'state.sqlite'), '--json']);
    expect(run.code, run.stderr).toBe(6);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'awaiting-replacement', target: { memberId: follower.id } });
    expect(run.stderr).toMatch(/RemediationCompleted\s/);
    expect((await lab.memberList()).map((m) => m.id)).not.toContain(follower.id);
  });
});
