// lab as a real tool: up, fault and down are separate invocations that share one lab through its
// state file; down leaves no process behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachLab, readLabState } from '../../../infra/lab/lab-attach.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { isAlive } from '../../../infra/lab/pids.ts';
import { jsonOf, runCli } from './support.ts';

describe('lab across invocations', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-lab-'));
  });
  afterAll(async () => {
    // Whatever happened above, nothing the lab started may survive the test.
    const stateFile = path.join(dir, '.lab', 'state.json');
    if (fs.existsSync(stateFile)) await attachLab(stateFile).down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('up, fault, probe, down', async () => {
    const up = await runCli(['lab', 'up', '--members', '3'], { cwd: dir, timeoutMs: 60_000 });
    expect(up.code, up.stderr).toBe(0);
    const stateFile = path.join(dir, '.lab', 'state.json');
    const state = readLabState(stateFile);
    const endpoints = state.members.map((m) => m.clientUrl).join(',');
    expect(up.stdout).toContain(`endpoints: ${endpoints}`);
    expect(up.stdout).toContain(`etcd-remediator probe --endpoints ${endpoints}`);
    const pids = [...state.members.map((m) => m.pid), state.ownerPid];
    expect(pids.every(isAlive)).toBe(true);

    const cut = await runCli(['lab', 'fault', 'etcd2', 'cut'], { cwd: dir });
    expect(cut.code, cut.stderr).toBe(0);
    // The cut member is refused at once; the deadline only has to outlast a busy machine.
    const probe = await runCli(['probe', '--endpoints', endpoints, '--json', '--timeout', '5s'], { cwd: dir });
    const seen = jsonOf<{ members: { name: string; reachable: boolean }[]; quorum: { ok: boolean } }>(probe);
    expect(seen.members.find((m) => m.name === 'etcd2')?.reachable, probe.stdout).toBe(false);
    expect(seen.members.filter((m) => m.reachable).map((m) => m.name).sort()).toEqual(['etcd1', 'etcd3']);
    expect(seen.quorum.ok).toBe(true);

    const delay = await runCli(['lab', 'fault', 'etcd2', 'delay', '20'], { cwd: dir });
    expect(delay.code, delay.stderr).toBe(0);
    expect(readLabState(stateFile).members.find((m) => m.name === 'etcd2')?.mode).toEqual({ delayMs: 20 });

    const bad = await runCli(['lab', 'fault', 'etcd2', 'melt'], { cwd: dir });
    expect(bad.code).toBe(2);

    // The daemon checks its control bodies itself: another client may send anything.
    const post = async (body: unknown) => {
      const response = await fetch(`${state.controlUrl!}/fault`, { method: 'POST', body: JSON.stringify(body) });
      return { status: response.status, error: ((await response.json()) as { error?: string }).error ?? '' };
    };
    expect(await post({ name: 'etcd2', fault: 'melt' })).toEqual({ status: 400, error: expect.stringMatching(/^fault: "melt" is not a fault: use .*cut.*blackhole.*heal.*delayMs/) });
    expect(await post({ name: 'etcd2', fault: { delayMs: -5 } })).toEqual({ status: 400, error: expect.stringMatching(/^fault\.delayMs: must be ≥ 0/) });
    expect(await post({ name: 'etcd2' })).toEqual({ status: 400, error: expect.stringMatching(/^fault: is required/) });
    expect(await post({ name: 7, fault: 'cut' })).toEqual({ status: 400, error: expect.stringMatching(/^name: must be a member name/) });
    expect(readLabState(stateFile).members.find((m) => m.name === 'etcd2')?.mode).toEqual({ delayMs: 20 });

    const down = await runCli(['lab', 'down'], { cwd: dir, timeoutMs: 30_000 });
    expect(down.code, down.stderr).toBe(0);
    await waitFor(async () => (pids.some(isAlive) ? undefined : true), { timeoutMs: 10_000, what: `lab pids ${pids.join(', ')} to exit` });
    expect(fs.existsSync(stateFile)).toBe(false);
    expect(fs.existsSync(state.root)).toBe(false);
  });
});
