// The bin shim on a Node older than 23.6 re-runs the CLI with the project's Node 24 as a child.
// The child must never outlive the shim: killed with SIGKILL, the shim cannot pass anything on,
// so the child watches its parent and stops by itself; a signal the shim receives is forwarded.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { olderNode, running, type Service, startCli, SYSTEM_NODE } from './support.ts';

const node = olderNode();

/** The one child the shim spawned. */
const childOf = (pid: number): number | undefined => {
  const pids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
  return pids.length === 1 ? pids[0] : undefined;
};

/** 'exit', not 'close': a surviving child would hold the shared pipes open forever. */
const exitOf = (service: Service): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
  service.child.exitCode !== null || service.child.signalCode !== null
    ? Promise.resolve({ code: service.child.exitCode, signal: service.child.signalCode })
    : new Promise((resolve) => service.child.once('exit', (code, signal) => resolve({ code, signal })));

describe.skipIf(node === undefined)(`the bin shim on an older Node (${SYSTEM_NODE}), on a lab`, () => {
  let lab: Lab;
  let dir: string;
  /** Every runtime child the tests saw: killed at the end if one survived. */
  const children: number[] = [];
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-shim-'));
  });
  afterAll(async () => {
    for (const pid of children.filter(running)) process.kill(pid, 'SIGKILL');
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** remediate on a cut leader through the shim, waiting inside the grace window. */
  const startWaiting = async (name: string) => {
    const leader = await lab.leader();
    await lab.fault(leader.name, 'cut');
    const state = path.join(dir, `${name}.sqlite`);
    const args = [
      '--endpoints',
      lab.endpoints().join(','),
      '--target',
      leader.name,
      '--grace',
      '60s',
      '--election-timeout',
      '500ms',
      '--timeout',
      '1s',
      '--state',
      state,
    ];
    const shim = startCli(['remediate', ...args], { node: node! });
    await shim.waitForStderr(/RetryRequested\s+LEADER_UNREACHABLE/, 30_000);
    const child = childOf(shim.child.pid!);
    expect(child, 'the shim runs the CLI in one child').toBeDefined();
    children.push(child!);
    expect(running(child!)).toBe(true);
    return { shim, child: child!, leader };
  };

  it('SIGKILL of the shim: the runtime child is gone within seconds, and the member stays', async () => {
    const { shim, child, leader } = await startWaiting('killed');
    shim.child.kill('SIGKILL');
    expect(await exitOf(shim)).toEqual({ code: null, signal: 'SIGKILL' });
    await waitFor(async () => (running(child) ? undefined : true), { timeoutMs: 5_000, what: `the shim's child ${child} to exit after the shim was killed` });
    expect((await lab.memberList()).map((m) => m.id)).toContain(leader.id);
    // It stopped as it would on SIGTERM: the incident stays open for a later run.
    await shim.waitForStderr(/interrupted \(SIGTERM\): incident \S+ stays open/);
    await lab.fault(leader.name, 'heal');
  });

  it('forwards SIGTERM to the child and exits with its code', async () => {
    const { shim, child, leader } = await startWaiting('terminated');
    shim.child.kill('SIGTERM');
    expect(await exitOf(shim)).toEqual({ code: 130, signal: null });
    expect(running(child)).toBe(false);
    await shim.waitForStderr(/interrupted \(SIGTERM\): incident \S+ stays open/);
    await lab.fault(leader.name, 'heal');
  });
});
