// Bad input is exit code 2 and one line on stderr that names what was wrong.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './support.ts';

const endpoints = ['--endpoints', 'http://127.0.0.1:2379'];

/** One process per distinct command line: a usage check and a help check of the same line read one run. */
const runs = new Map<string, ReturnType<typeof runCli>>();
const runOnce = (args: string[]): ReturnType<typeof runCli> => {
  const key = JSON.stringify(args);
  if (!runs.has(key)) runs.set(key, runCli(args));
  return runs.get(key)!;
};

async function expectUsageError(args: string[], names: string): Promise<void> {
  const run = await runOnce(args);
  expect(run.code, run.stderr).toBe(2);
  expect(run.stdout).toBe('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^etcd-remediator: /);
  expect(lines[0]).toContain(names);
}

describe.concurrent('etcd-remediator usage errors', () => {
  it.each([
    { args: ['probe', ...endpoints, '--bogus'], names: '--bogus' },
    { args: ['plan', ...endpoints, '--target', 'etcd1', '--grace', '5x'], names: '--grace: "5x" is not a duration' },
    { args: ['remediate', ...endpoints, '--target', 'etcd1', '--timeout', '10'], names: '--timeout: "10" is not a duration' },
    { args: ['plan', ...endpoints], names: '--target is required' },
    { args: ['probe', '--endpoints', 'etcd1:2379'], names: '--endpoints: "etcd1:2379"' },
    { args: ['frobnicate'], names: 'unknown command "frobnicate"' },
    { args: ['status'], names: '--state is required' },
    // An incident is named by an id in the shape ids are made in, or its start: refused before any file is read.
    {
      args: ['status', '../x', '--state', path.join(os.tmpdir(), 'no-such-state.sqlite')],
      names: 'INCIDENT: "../x" is not an incident id nor the start of one (ids are lowercase UUIDs',
    },
    {
      args: ['remediate', ...endpoints, '--resume', 'inc/1', '--state', path.join(os.tmpdir(), 'no-such-state.sqlite')],
      names: '--resume: "inc/1" is not an incident id nor the start of one',
    },
  ])('$args.0 $names', ({ args, names }) => expectUsageError(args, names));

  it('the bad-duration message reads as documented', async () => {
    const run = await runOnce(['plan', ...endpoints, '--target', 'etcd1', '--grace', '5x']);
    expect(run.stderr).toBe('etcd-remediator: --grace: "5x" is not a duration: "x" is not a unit (use e.g. 500ms, 30s, 1h30m)\n');
  });

  it('--version (and -V, version) says our version from package.json and the Node.js that runs it, exit 0', async () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V', 'version']) {
      const run = await runOnce([flag]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^etcd-remediator ${pkg.version.replaceAll('.', '\\.')} \\(Node\\.js 24\\.\\d+\\.\\d+, linux-[a-z0-9]+\\)\\n$`));
    }
    await expectUsageError(['--version', 'now'], '--version takes nothing after it, got "now"');
  });

  it.each(['probe', 'plan', 'remediate', 'status', 'run', 'lab'])('%s --help prints its usage and exits 0', async (command) => {
    const run = await runOnce([command, '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^usage: etcd-remediator ${command}`));
  });

  it.each([
    { command: 'probe', says: ['--kubeconfig F', '--workload-kubeconfig F', '--namespace NS', '--paths P[,P…]', 'exec-relay', 'Secret NAME-kubeconfig'] },
    { command: 'plan', says: ['--kubeconfig F', '--paths P[,P…]', '--machine NAME', '--node NAME', 'give exactly one of --target, --machine and --node'] },
    {
      command: 'remediate',
      says: [
        '--kubeconfig F',
        '--paths P[,P…]',
        '--machine NAME',
        '--node NAME',
        '--resume INCIDENT',
        "on the target's Machine with --cluster, else on its Node\n(the Event in namespace default",
      ],
    },
    {
      command: 'run',
      says: [
        '"kubeconfig"',
        'capiCluster',
        'workloadKubeconfig',
        'namespace',
        'paths (or policy.pathOrder, not both)',
        '"relayBinary": "/opt/etcd/bin/etcdctl"',
        '"relayTls": { "cacert"',
        "on the target's Machine with\n    capiCluster, else on its Node (the Event in namespace default)",
      ],
    },
    ...['probe', 'plan', 'remediate', 'watch', 'register'].map((command) => ({
      command,
      says: ['--relay-binary PATH', '--relay-cacert PATH --relay-cert PATH --relay-key PATH', '/usr/local/bin/etcdctl', '/etc/kubernetes/pki/etcd/ca.crt'],
    })),
  ])('$command --help documents Kubernetes access', async ({ command, says }) => {
    const run = await runOnce([command, '--help']);
    for (const text of says) expect(run.stdout).toContain(text);
  });
});

describe.concurrent('Kubernetes access and target flags: one usage error per rule, naming the flag', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-kube-usage-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  // Every rule here but one is checked before the file is parsed, and nothing is ever asked.
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\n');
  const notKubeconfig = path.join(dir, 'not-a-kubeconfig');
  fs.writeFileSync(notKubeconfig, 'clusters: [unclosed\n');
  const kube = ['--kubeconfig', kubeconfig];
  const capi = [...kube, '--cluster', 'wl'];

  it.each([
    { rule: 'neither --endpoints nor --kubeconfig', args: ['remediate', '--target', 'etcd1'], names: '--endpoints or --kubeconfig is required: give one' },
    {
      rule: 'an unreadable --kubeconfig',
      args: ['probe', '--kubeconfig', path.join(dir, 'missing')],
      names: `--kubeconfig: cannot read ${path.join(dir, 'missing')}: ENOENT`,
    },
    { rule: 'a --kubeconfig that is not one', args: ['probe', '--kubeconfig', notKubeconfig], names: `--kubeconfig: ${notKubeconfig} is not a kubeconfig` },
    {
      rule: 'an unreadable --workload-kubeconfig',
      args: ['probe', ...capi, '--workload-kubeconfig', path.join(dir, 'gone')],
      names: `--workload-kubeconfig: cannot read ${path.join(dir, 'gone')}: ENOENT`,
    },
    {
      rule: '--workload-kubeconfig without --cluster',
      args: ['probe', ...kube, '--workload-kubeconfig', kubeconfig],
      names: '--workload-kubeconfig: needs --kubeconfig (the management cluster) and --cluster',
    },
    {
      rule: '--namespace without --kubeconfig',
      args: ['probe', ...endpoints, '--cluster', 'wl', '--namespace', 'ns'],
      names: '--namespace: needs --kubeconfig and --cluster',
    },
    {
      rule: 'a kube path without --kubeconfig',
      args: ['probe', ...endpoints, '--paths', 'direct,port-forward'],
      names: '--paths: port-forward needs --kubeconfig',
    },
    { rule: 'direct without --endpoints', args: ['probe', ...kube, '--paths', 'port-forward,direct'], names: '--paths: direct needs --endpoints' },
    {
      rule: 'an unknown path',
      args: ['probe', ...kube, '--paths', 'port-forward,ssh'],
      names: '--paths: "ssh" is not a path (use direct, port-forward, exec-relay)',
    },
    { rule: 'a path twice', args: ['probe', ...kube, '--paths', 'exec-relay,port-forward,exec-relay'], names: '--paths: exec-relay is listed twice' },
    {
      rule: 'exec, which is no path: the relay is exec-relay',
      args: ['probe', ...kube, '--paths', 'exec,port-forward'],
      names: '--paths: "exec" is not a path (use direct, port-forward, exec-relay)',
    },
    { rule: 'no path', args: ['probe', ...kube, '--paths', ','], names: '--paths: give at least one of direct' },
    {
      rule: '--machine without --kubeconfig',
      args: ['plan', ...endpoints, '--cluster', 'wl', '--machine', 'wl-cp-1'],
      names: '--machine needs --kubeconfig and --cluster NAME',
    },
    { rule: '--machine without --cluster', args: ['remediate', ...kube, '--machine', 'wl-cp-1'], names: '--machine needs --kubeconfig and --cluster NAME' },
    { rule: '--node without --kubeconfig', args: ['plan', ...endpoints, '--node', 'cp-1'], names: '--node needs --kubeconfig' },
    {
      rule: 'two targets',
      args: ['plan', ...capi, '--target', 'cp-1', '--machine', 'wl-cp-1'],
      names: '--target and --machine: give exactly one of --target, --machine and --node',
    },
    { rule: 'no target', args: ['remediate', ...capi], names: '--target is required (e.g. --target etcd-1), or --machine NAME or --node NAME' },
    {
      rule: 'a relative --relay-binary',
      args: ['probe', ...kube, '--relay-binary', 'etcdctl'],
      names: '--relay-binary: "etcdctl" is not an absolute path: a relative one would resolve in the etcd container\'s working directory',
    },
    {
      rule: 'a --relay-key with a space',
      args: ['plan', ...capi, '--machine', 'wl-cp-1', '--relay-cacert', '/a/ca.crt', '--relay-cert', '/a/c.crt', '--relay-key', '/a/c .key'],
      names: '--relay-key: "/a/c .key" holds a space: ',
    },
    {
      rule: '--relay-cert alone',
      args: ['remediate', ...capi, '--machine', 'wl-cp-1', '--relay-cert', '/a/c.crt'],
      names: '--relay-cacert: is required with --relay-cert: ',
    },
    {
      rule: '--relay-binary without --kubeconfig',
      args: ['probe', ...endpoints, '--relay-binary', '/opt/etcd/bin/etcdctl'],
      names: "--relay-binary: needs --kubeconfig: the exec relay runs etcdctl in the cluster's etcd pods",
    },
    {
      rule: '--resume with --machine',
      args: ['remediate', ...capi, '--resume', 'abc', '--machine', 'wl-cp-1', '--state', path.join(dir, 's.sqlite')],
      names: '--resume and --machine: give one',
    },
  ])('$rule', ({ args, names }) => expectUsageError(args, names));
});
