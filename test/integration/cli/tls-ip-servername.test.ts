// TLS to an endpoint named by IP address sends no server name (RFC 6066 permits none for an IP),
// so Node never prints its DEP0123 warning, on a run that succeeds as on one that blocks.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTlsCluster, type TlsCluster } from '../e2e/tls-cluster.ts';
import { jsonOf, runCli } from './support.ts';

const DEP0123 = /DEP0123|TLS ServerName to an IP address/;
const run = promisify(execFile);

describe('TLS to IP endpoints prints no DEP0123', () => {
  let cluster: TlsCluster;
  beforeAll(async () => {
    cluster = await startTlsCluster(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.down();
  });

  const tlsFlags = () => ['--cacert', cluster.certs.caFile, '--cert', cluster.certs.certFile, '--key', cluster.certs.keyFile];

  it('probe of every member over https://127.0.0.1', async () => {
    const run = await runCli(['probe', '--endpoints', cluster.endpoints().join(','), ...tlsFlags(), '--json']);
    expect(run.code, run.stderr).toBe(0);
    const { members } = jsonOf<{ members: { name: string; reachable: boolean }[] }>(run);
    expect(members.map((m) => [m.name, m.reachable]).sort()).toEqual(cluster.members.map((m) => [m.name, true]).sort());
    expect(run.stderr).not.toMatch(DEP0123);
  });

  it('plan of a follower, which asks etcd more than the probe does', async () => {
    const leader = await cluster.leader();
    const follower = cluster.members.find((m) => m.name !== leader.name)!;
    const run = await runCli(['plan', '--endpoints', cluster.endpoints().join(','), ...tlsFlags(), '--target', follower.name, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(jsonOf<{ outcome: string }>(run).outcome).toBe('planned');
    expect(run.stderr).not.toMatch(DEP0123);
  });

  it('with authentication on too: the token exchange sends no server name either', async () => {
    const password = 'tls-root-secret-7Hq';
    const ctl = (...args: string[]) =>
      run(process.env.ETCDCTL_BIN ?? 'etcdctl', ['--endpoints', cluster.members[0]!.directUrl, ...tlsFlags(), '--command-timeout', '5s', ...args], {
        env: { ...process.env, ETCDCTL_API: '3' },
      });
    await ctl('role', 'add', 'root');
    await ctl('user', 'add', `root:${password}`);
    await ctl('user', 'grant-role', 'root', 'root');
    await ctl('auth', 'enable');
    const passwordFile = path.join(cluster.root, 'root.password');
    fs.writeFileSync(passwordFile, password, { mode: 0o600 });
    const leader = await cluster.leader();
    const follower = cluster.members.find((m) => m.name !== leader.name)!;
    const r = await runCli([
      'plan',
      '--endpoints',
      cluster.endpoints().join(','),
      ...tlsFlags(),
      '--user',
      'root',
      '--password-file',
      passwordFile,
      '--target',
      follower.name,
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf<{ outcome: string }>(r).outcome).toBe('planned');
    expect(r.stderr).not.toMatch(DEP0123);
  });
});
