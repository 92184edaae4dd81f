// Where `run` may put its Unix socket: a directory only we (or root) can change entries of. A sticky
// directory such as /tmp is one, even though everyone may write it: there, only the owner of an
// entry, the directory's owner and root can remove or rename it. A directory another user owns is
// not, sticky or not: that user could swap the socket for their own.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killService, postToSocket, runCli, type Service, startCli } from './support.ts';

/** An invalid event: a 400 naming the field shows the request reached the intake. */
const INVALID = JSON.stringify({ clusterId: 'lab', target: { memberName: 'etcd1' }, reason: 'kubelet down', source: 'test', observedAt: 'yesterday' });
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

/** Runs a command as user nobody: what another local user could do to the directory. */
const asNobody = (command: string[]) =>
  spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '--', ...command], { encoding: 'utf8' });

describe('run: the directory of its Unix socket', () => {
  let dir: string;
  const services: Service[] = [];
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-socket-'));
    // Others may pass through, as through any path to /tmp: only each directory's own mode decides.
    fs.chmodSync(dir, 0o755);
  });
  afterAll(async () => {
    for (const s of services) await killService(s);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const configFile = (name: string, socketPath: string) => {
    const file = path.join(dir, `${name}.json`);
    // Nothing listens on port 1: only invalid events are sent, so no etcd is needed.
    fs.writeFileSync(
      file,
      JSON.stringify({ state: `${name}.sqlite`, listen: `unix:${socketPath}`, clusters: [{ clusterId: 'lab', endpoints: ['http://127.0.0.1:1'] }] }),
    );
    return file;
  };
  const socketDir = (name: string, mode: number, owner?: number) => {
    const d = path.join(dir, name);
    fs.mkdirSync(d);
    fs.chmodSync(d, mode);
    if (owner !== undefined) fs.chownSync(d, owner, owner);
    return d;
  };

  it('accepts a sticky directory everyone may write, as /tmp: it serves there, and another user can neither remove nor replace the socket', async () => {
    const socketPath = path.join(socketDir('sticky', 0o1777), 'run.sock');
    const service = startCli(['run', '--config', configFile('sticky', socketPath)]);
    services.push(service);
    await service.waitForStderr(/listening on unix:\S+ POST \/events; .*; owner only/);
    expect(await postToSocket(socketPath, INVALID)).toBe(400);

    if (isRoot) {
      const removed = asNobody(['rm', '-f', socketPath]);
      expect(removed.status, removed.stderr).not.toBe(0);
      expect(removed.stderr).toMatch(/Operation not permitted/);
      const decoy = path.join(path.dirname(socketPath), 'decoy');
      expect(asNobody(['touch', decoy]).status).toBe(0);
      const replaced = asNobody(['mv', '-f', decoy, socketPath]);
      expect(replaced.status, replaced.stderr).not.toBe(0);
      expect(fs.lstatSync(socketPath).isSocket()).toBe(true);
      expect(await postToSocket(socketPath, INVALID)).toBe(400);
    }
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });

  it.runIf(isRoot).each([
    ['a sticky directory another user owns', 0o1777],
    ['a directory another user owns that only they can write', 0o755],
  ])('refuses %s: its owner could swap the socket', async (name, mode) => {
    const d = socketDir(`owned-${mode.toString(8)}`, mode, NOBODY);
    const socketPath = path.join(d, 'run.sock');
    // What the refusal is about: the owner may remove and rename any entry there.
    fs.writeFileSync(path.join(d, 'ours'), 'x');
    expect(asNobody(['rm', '-f', path.join(d, 'ours')]).status, name).toBe(0);

    const run = await runCli(['run', '--config', configFile(`owned-${mode.toString(8)}`, socketPath)], { timeoutMs: 15_000 });

    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n').at(-1)).toBe(
      `etcd-remediator: listen unix:${socketPath}: its directory is owned by uid ${NOBODY}, who could remove or replace the socket; use a directory of your own that only you can write (install -d -m 700 DIR)`,
    );
    expect(fs.existsSync(socketPath)).toBe(false);
  });
});
