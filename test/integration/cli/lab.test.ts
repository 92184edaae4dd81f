// lab as a real tool: up, fault and down are separate invocations that share one lab through its
// state file; down leaves no process behind.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
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
    expect(
      seen.members
        .filter((m) => m.reachable)
        .map((m) => m.name)
        .sort(),
    ).toEqual(['etcd1', 'etcd3']);
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
    expect(await post({ name: 'etcd2', fault: 'melt' })).toEqual({
      status: 400,
      error: expect.stringMatching(/^fault: "melt" is not a fault: use .*cut.*blackhole.*heal.*delayMs/),
    });
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

describe('a TLS lab across invocations', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-lab-tls-'));
  });
  afterAll(async () => {
    const stateFile = path.join(dir, '.lab', 'state.json');
    if (fs.existsSync(stateFile)) await attachLab(stateFile).down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('up --tls prints the CA, client certificate and key and the https endpoints; probe with them; status, fault and down', async () => {
    const up = await runCli(['lab', 'up', '--members', '3', '--tls'], { cwd: dir, timeoutMs: 60_000 });
    expect(up.code, up.stderr).toBe(0);
    const stateFile = path.join(dir, '.lab', 'state.json');
    const state = readLabState(stateFile);
    const tls = state.tls!;
    expect(tls, 'the state names the lab PKI').toBeDefined();
    const endpoints = state.members.map((m) => m.clientUrl).join(',');
    expect(state.members.every((m) => m.clientUrl.startsWith('https://127.0.0.1:'))).toBe(true);
    const flags = `--cacert ${tls.caFile} --cert ${tls.certFile} --key ${tls.keyFile}`;
    expect(up.stdout).toContain('over TLS');
    expect(up.stdout).toContain(`endpoints: ${endpoints}\n`);
    expect(up.stdout).toContain(`CA:          ${tls.caFile}\nclient cert: ${tls.certFile}\nclient key:  ${tls.keyFile}\n`);
    expect(up.stdout).toContain(`etcd-remediator probe --endpoints ${endpoints} --election-timeout ${state.electionTimeoutMs}ms ${flags}\n`);
    expect(up.stdout).toContain(`etcdctl --endpoints ${endpoints} ${flags} endpoint status -w table\n`);
    // Never the CA's key: a client has no use for it.
    expect(up.stdout).not.toContain(tls.caKeyFile);
    for (const file of [tls.caFile, tls.certFile, tls.keyFile]) expect(fs.existsSync(file), file).toBe(true);

    // What it printed is enough to talk to the lab.
    const probeArgs = ['probe', '--endpoints', endpoints, ...flags.split(' '), '--json', '--timeout', '5s'];
    const healthy = jsonOf<{ members: { name: string; reachable: boolean }[]; quorum: { ok: boolean } }>(await runCli(probeArgs, { cwd: dir }));
    // The probe lists members in etcd's order (by id), not by name.
    expect(healthy.members.map((m) => [m.name, m.reachable]).sort()).toEqual([
      ['etcd1', true],
      ['etcd2', true],
      ['etcd3', true],
    ]);
    const etcdctl = await promisify(execFile)(
      process.env.ETCDCTL_BIN ?? 'etcdctl',
      ['--endpoints', endpoints, ...flags.split(' '), 'endpoint', 'status', '-w', 'json'],
      { env: { ...process.env, ETCDCTL_API: '3' } },
    );
    expect((JSON.parse(etcdctl.stdout) as unknown[]).length, etcdctl.stderr).toBe(3);
    const plain = await runCli(['probe', '--endpoints', endpoints, '--json', '--timeout', '5s'], { cwd: dir });
    expect(jsonOf<{ members: unknown[] }>(plain).members, 'without the files the lab answers nobody').toEqual([]);

    const status = await runCli(['lab', 'status'], { cwd: dir });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/\*/);
    expect(status.stdout).toContain(`CA:          ${tls.caFile}\n`);
    const statusJson = jsonOf<{ leader: string | null; tls: { caFile: string } }>(await runCli(['lab', 'status', '--json'], { cwd: dir }));
    expect(statusJson.leader).toMatch(/^etcd[123]$/);
    expect(statusJson.tls.caFile).toBe(tls.caFile);

    const cut = await runCli(['lab', 'fault', 'etcd2', 'cut'], { cwd: dir });
    expect(cut.code, cut.stderr).toBe(0);
    const seen = jsonOf<{ members: { name: string; reachable: boolean }[]; quorum: { ok: boolean } }>(await runCli(probeArgs, { cwd: dir }));
    expect(
      seen.members
        .filter((m) => m.reachable)
        .map((m) => m.name)
        .sort(),
    ).toEqual(['etcd1', 'etcd3']);
    expect(seen.quorum.ok).toBe(true);

    const pids = [...state.members.map((m) => m.pid), state.ownerPid];
    const down = await runCli(['lab', 'down'], { cwd: dir, timeoutMs: 30_000 });
    expect(down.code, down.stderr).toBe(0);
    await waitFor(async () => (pids.some(isAlive) ? undefined : true), { timeoutMs: 10_000, what: `lab pids ${pids.join(', ')} to exit` });
    expect(fs.existsSync(state.root)).toBe(false);
    expect(fs.existsSync(tls.caFile)).toBe(false);
  });
});
