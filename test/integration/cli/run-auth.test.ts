// Who may post to `run`: with a token, only a request that carries it (401 otherwise, the refusal
// logged without the token, no dead letter); on a Unix socket, only its owner (mode 0600); and no
// TCP port at all without one of them unless the config says insecureNoAuth.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killService, postToSocket, runCli, type Service, startCli } from './support.ts';

const TOKEN = 'run-auth-token-5d1e8b3a9c7f2460';
/** An invalid event: what the intake answers (400 naming the field) shows the request got past the door. */
const INVALID = JSON.stringify({ clusterId: 'lab', target: { memberName: 'etcd1' }, reason: 'kubelet down', source: 'test', observedAt: 'yesterday' });

describe('run: who may post', () => {
  let dir: string;
  const services: Service[] = [];
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-auth-'));
  });
  afterAll(async () => {
    for (const s of services) await killService(s);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const configFile = (name: string, extra: Record<string, unknown>) => {
    const file = path.join(dir, `${name}.json`);
    // Nothing listens on port 1: only invalid events are sent, so no etcd is needed.
    fs.writeFileSync(
      file,
      JSON.stringify({ state: `${name}.sqlite`, listen: '127.0.0.1:0', ...extra, clusters: [{ clusterId: 'lab', endpoints: ['http://127.0.0.1:1'] }] }),
    );
    return file;
  };
  const start = (name: string, extra: Record<string, unknown>) => {
    const service = startCli(['run', '--config', configFile(name, extra)]);
    services.push(service);
    return service;
  };
  const stop = async (service: Service) => {
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  };
  const deadLetters = async (name: string) => {
    const status = await runCli(['status', '--state', path.join(dir, `${name}.sqlite`), '--dead-letters', '--json']);
    expect(status.code, status.stderr).toBe(0);
    return (JSON.parse(status.stdout) as { deadLetters: unknown[] }).deadLetters;
  };

  it('with a token: 401 with a JSON error when it is missing or wrong, logged without the token; the right one gets in', async () => {
    const service = start('token', { token: TOKEN });
    const [, url] = await service.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/events); .*; bearer token/);
    const wrongToken = 'not-the-token-but-long-enough-1234';
    for (const headers of [
      {},
      { authorization: `Bearer ${wrongToken}` },
      { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` },
      { authorization: `Bearer ${TOKEN}x` },
    ]) {
      const response = await fetch(url!, { method: 'POST', body: INVALID, headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect((await response.json()) as { error: string }).toMatchObject({
        error: expect.stringMatching(/^(no|wrong) bearer token: send Authorization: Bearer/) as unknown,
      });
    }
    await service.waitForStderr(/refused POST \/events from 127\.0\.0\.1:\d+: no bearer token/);
    await service.waitForStderr(/refused POST \/events from 127\.0\.0\.1:\d+: wrong bearer token/);
    // Nothing an outsider sends is kept: no dead letter.
    expect(await deadLetters('token')).toEqual([]);

    const ok = await fetch(url!, { method: 'POST', body: INVALID, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(400);
    expect(((await ok.json()) as { field: string }).field).toBe('observedAt');
    await stop(service);
    for (const secret of [TOKEN, wrongToken]) expect(service.stderr() + service.stdout()).not.toContain(secret);
  });

  it('on TCP without a token: no port, stdin only, and it says why; insecureNoAuth opens it', async () => {
    const closed = start('no-auth', {});
    await closed.waitForStderr(/listening on stdin only; /);
    expect(closed.stderr()).toContain(
      'not listening on 127.0.0.1:0: without a token any local user could post to it and trigger removals; set "token" or "tokenFile"',
    );
    expect(closed.stderr()).not.toMatch(/http:\/\//);
    closed.child.stdin!.write(`${INVALID}\n`);
    await closed.waitForStderr(/stdin line 1: refused: .*observedAt/);
    await stop(closed);

    const open = start('insecure', { insecureNoAuth: true });
    const [, url] = await open.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/events); .*; no auth \(insecureNoAuth\)/);
    expect((await fetch(url!, { method: 'POST', body: INVALID })).status).toBe(400);
    await stop(open);
  });

  it('refuses a token config it cannot trust, never echoing the token', async () => {
    const short = await runCli(['run', '--config', configFile('short', { token: 'hunter2' })]);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('token: must be at least 16 characters');
    expect(short.stderr).not.toContain('hunter2');

    const both = await runCli(['run', '--config', configFile('both', { token: TOKEN, insecureNoAuth: true })]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('insecureNoAuth: give it or a token, not both');

    const tokenFile = path.join(dir, 'run.token');
    fs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o644 });
    fs.chmodSync(tokenFile, 0o644);
    const open = await runCli(['run', '--config', configFile('open-file', { tokenFile: 'run.token' })]);
    expect(open.code).toBe(2);
    expect(open.stderr).toContain('tokenFile run.token: is readable or writable by others (mode 644); chmod 600 it');

    fs.chmodSync(tokenFile, 0o600);
    const service = start('token-file', { tokenFile: 'run.token' });
    const [, url] = await service.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/events); .*; bearer token/);
    expect((await fetch(url!, { method: 'POST', body: INVALID })).status).toBe(401);
    expect((await fetch(url!, { method: 'POST', body: INVALID, headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(400);
    await stop(service);
  });

  it('on a Unix socket: mode 0600, serves its owner, replaces only a stale socket of ours, refuses anything else at the path', async () => {
    const sockDir = path.join(dir, 'sock');
    fs.mkdirSync(sockDir, { mode: 0o700 });
    const socketPath = path.join(sockDir, 'run.sock');
    // A stale socket of ours, as a killed service leaves it: no one listens, so it is replaced.
    spawnSync(process.execPath, ['-e', "require('node:net').createServer().listen(process.argv[1], () => process.kill(process.pid, 'SIGKILL'))", socketPath]);
    expect(fs.lstatSync(socketPath).isSocket()).toBe(true);
    const service = start('unix', { listen: `unix:${socketPath}` });
    await service.waitForStderr(new RegExp(`listening on unix:${socketPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} POST /events; .*; owner only`));
    const stat = fs.lstatSync(socketPath);
    expect(stat.isSocket()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(await postToSocket(socketPath, INVALID)).toBe(400);

    // A second service on the same socket is refused: another process listens on it.
    const second = await runCli(['run', '--config', configFile('unix-2', { listen: `unix:${socketPath}` })]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`listen unix:${socketPath}: another process is listening on it`);
    await stop(service);

    // A regular file where the socket would be is never replaced.
    const file = path.join(sockDir, 'file.sock');
    fs.writeFileSync(file, 'keep me');
    const notSocket = await runCli(['run', '--config', configFile('unix-file', { listen: `unix:${file}` })]);
    expect(notSocket.code).toBe(2);
    expect(notSocket.stderr).toContain(`listen unix:${file}: exists and is not a socket; remove it or choose another path`);
    expect(fs.readFileSync(file, 'utf8')).toBe('keep me');

    // A directory others can write: they could replace the socket with their own.
    const shared = path.join(dir, 'shared');
    fs.mkdirSync(shared);
    fs.chmodSync(shared, 0o777);
    const open = await runCli(['run', '--config', configFile('unix-shared', { listen: `unix:${path.join(shared, 'run.sock')}` })]);
    expect(open.code).toBe(2);
    expect(open.stderr).toContain(`listen unix:${path.join(shared, 'run.sock')}: its directory is writable by others (mode 777) and not sticky`);
  });
});
