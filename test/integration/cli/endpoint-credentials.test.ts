// An endpoint with credentials in it (http://user:password@host:port) is refused at every edge
// that takes one, exit 2 and one line naming the flag or field and where credentials go instead,
// and the password is never echoed: etcd never reads it there, while logs, events and the state
// file would keep it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support.ts';

const PASSWORD = 'S3cretPw';
const LEAKY = `http://root:${PASSWORD}@127.0.0.1:1`;
const INSTEAD = 'use --user with --password-file (or ETCDCTL_PASSWORD)';

describe('credentials in endpoint URLs are refused, never echoed', () => {
  let dir: string;
  let kubeconfig: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-endpoint-credentials-'));
    kubeconfig = path.join(dir, 'kubeconfig');
    fs.writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: mgmt',
        '  cluster:',
        `    server: https://admin:${PASSWORD}@127.0.0.1:1`,
        'users:',
        '- name: u',
        '  user:',
        '    token: abcdefghijklmnop',
        'contexts:',
        '- name: c',
        '  context: {cluster: mgmt, user: u}',
        'current-context: c',
        '',
      ].join('\n'),
    );
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const runConfig = (name: string, endpoints: string[]) => {
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({ state: `${name}.sqlite`, listen: '127.0.0.1:0', insecureNoAuth: true, clusters: [{ clusterId: 'lab', endpoints }] }),
    );
    return file;
  };

  it.each([
    {
      name: 'probe --endpoints',
      args: () => ['probe', '--endpoints', LEAKY],
      says: () => '--endpoints: http://***@127.0.0.1:1 carries credentials',
      instead: INSTEAD,
    },
    {
      name: 'a user name alone',
      args: () => ['probe', '--endpoints', 'http://root@127.0.0.1:1'],
      says: () => '--endpoints: http://***@127.0.0.1:1 carries credentials',
      instead: INSTEAD,
    },
    {
      name: 'the second of two, and not a client URL either',
      args: () => ['plan', '--endpoints', `http://127.0.0.1:1,root:${PASSWORD}@127.0.0.1`, '--target', 'etcd1'],
      says: () => '--endpoints: ***@127.0.0.1 carries credentials',
      instead: INSTEAD,
    },
    {
      name: 'remediate --endpoints, with a state file',
      args: () => ['remediate', '--endpoints', LEAKY, '--target', 'etcd1', '--state', path.join(dir, 'remediate.sqlite')],
      says: () => '--endpoints: http://***@127.0.0.1:1 carries credentials',
      instead: INSTEAD,
    },
    {
      name: 'run --config endpoints',
      args: () => ['run', '--config', runConfig('leaky', ['http://127.0.0.1:1', LEAKY])],
      says: () => 'clusters[0].endpoints[1]: carries credentials',
      instead: 'use auth.user with auth.passwordFile (or ETCDCTL_PASSWORD)',
    },
    {
      name: 'register --endpoints',
      args: () => ['register', '--table', 't', '--cluster', 'prod', '--endpoints', LEAKY, '--dry-run'],
      says: () => '--endpoints: http://***@127.0.0.1:1 carries credentials',
      instead: 'register takes no etcd credentials',
    },
    {
      name: 'probe --kubeconfig whose server URL has them',
      args: () => ['probe', '--kubeconfig', kubeconfig],
      says: () => `--kubeconfig: ${path.join(dir, 'kubeconfig')}: cluster mgmt's server https://***@127.0.0.1:1 carries credentials`,
      instead: "the kubeconfig's user entry",
    },
    {
      name: 'watch --kubeconfig whose server URL has them',
      args: () => ['watch', '--kubeconfig', kubeconfig, '--state', path.join(dir, 'watch.sqlite')],
      says: () => `--kubeconfig: ${path.join(dir, 'kubeconfig')}: cluster mgmt's server https://***@127.0.0.1:1 carries credentials`,
      instead: "the kubeconfig's user entry",
    },
  ])('$name: exit 2, one line, no password', async ({ args, says, instead }) => {
    const run = await runCli(args(), { timeoutMs: 15_000 });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toContain(says());
    expect(lines[0]).toContain(instead);
    expect(run.stderr).not.toContain(PASSWORD);
  });

  it('remediate refused so creates no state file that could keep the URL', async () => {
    const state = path.join(dir, 'never.sqlite');
    const run = await runCli(['remediate', '--endpoints', LEAKY, '--target', 'etcd1', '--state', state], { timeoutMs: 15_000 });
    expect(run.code, run.stderr).toBe(2);
    expect(fs.existsSync(state)).toBe(false);
  });
});
