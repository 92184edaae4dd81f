// An etcd image and a cluster that keep etcdctl and its certificates elsewhere than kubeadm: every
// node's pod holds etcdctl at /opt/etcd/bin/etcdctl and the relay's CA, certificate and key under
// /etc/etcd/pki/, and nothing under /etc/kubernetes/pki/. The real binary, through the FAKE API
// server on a real etcd lab over TLS, relays only once --relay-binary, --relay-cacert,
// --relay-cert and --relay-key say where they are; watch takes the same for every cluster.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { createCapiDirectory } from '../../../functions/adapters/local/capi-directory.ts';
import { defaultPolicy } from '../../../functions/core/policy/policy.ts';
import type { CliResult } from '../../../infra/cli/output.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, type KubeWorld } from '../kube/kube-world.ts';
import { jsonOf, runCli } from './support.ts';

const BINARY = '/opt/etcd/bin/etcdctl';
const PKI = '/etc/etcd/pki/';
const RELAY = ['--relay-binary', BINARY, '--relay-cacert', `${PKI}ca.crt`, '--relay-cert', `${PKI}client.crt`, '--relay-key', `${PKI}client.key`];
// A probe's whole deadline is one call timeout; a loaded machine needs more than the default 2s.
const SLOW = ['--timeout', '5s'];

/** The etcdctl the fake runs for the image's, as an absolute path to link into the pods. */
function realEtcdctl(): string {
  const named = process.env.ETCDCTL_BIN ?? 'etcdctl';
  if (named.includes('/')) return path.resolve(named);
  const found = (process.env.PATH ?? '')
    .split(':')
    .map((dir) => path.join(dir, named))
    .find((file) => fs.existsSync(file));
  if (!found) throw new Error(`no ${named} on PATH`);
  return found;
}

/** Each node's pod: kubeadm's pki/etcd files moved to /etc/etcd/pki/, etcdctl at /opt/etcd/bin/. */
function relayFilesElsewhere(world: KubeWorld): void {
  const etcdctl = realEtcdctl();
  for (const member of world.lab.members) {
    const root = world.tls!.podRootOf(member.name);
    const kubeadm = path.join(root, 'etc', 'kubernetes', 'pki', 'etcd');
    const elsewhere = path.join(root, PKI);
    fs.mkdirSync(elsewhere, { recursive: true });
    fs.copyFileSync(path.join(kubeadm, 'ca.crt'), path.join(elsewhere, 'ca.crt'));
    fs.copyFileSync(path.join(kubeadm, 'healthcheck-client.crt'), path.join(elsewhere, 'client.crt'));
    fs.copyFileSync(path.join(kubeadm, 'healthcheck-client.key'), path.join(elsewhere, 'client.key'));
    fs.rmSync(path.join(root, 'etc', 'kubernetes'), { recursive: true });
    fs.mkdirSync(path.join(root, path.dirname(BINARY)), { recursive: true });
    fs.symlinkSync(etcdctl, path.join(root, BINARY));
  }
  world.fake.addPodPathPrefix(PKI);
  world.fake.addPodPathPrefix(`${path.dirname(BINARY)}/`);
}

interface ProbeJson {
  members: { name: string; paths: { path: string; ok: boolean; error?: string; endpoint: string }[] }[];
  quorum: { ok: boolean };
}

/** The argv of every exec the fake was asked for since `from`. */
const execCommands = (world: KubeWorld, from: number): string[][] =>
  world.fake.upgrades
    .slice(from)
    .filter((u) => u.path.endsWith('/exec'))
    .map((u) => new URLSearchParams(u.query).getAll('command'));

describe.sequential('the exec relay with etcdctl and its certificates where the flags say', () => {
  let world: KubeWorld;
  let dir: string;
  let kubeconfig: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-kube-relay-paths-'));
    kubeconfig = path.join(dir, 'management.kubeconfig');
    world = await startKubeWorld(3, { kubeconfigFile: kubeconfig });
    relayFilesElsewhere(world);
  });
  afterAll(async () => {
    await world?.down();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  const probe = (...extra: string[]) => runCli(['probe', '--kubeconfig', kubeconfig, '--cluster', CAPI_CLUSTER, '--paths', 'exec-relay', ...SLOW, ...extra]);

  it('without the flags the relay runs kubeadm’s etcdctl and finds none of its files', async () => {
    const run = await probe();
    expect(run.code, run.stderr).toBe(1);
    for (const m of world.lab.members) {
      expect(run.stdout).toContain(
        `via kube-system/etcd-${m.name} failed the TLS handshake: open /etc/kubernetes/pki/etcd/healthcheck-client.crt: no such file or directory`,
      );
    }
  });

  // The next three at once: the probe's execs are the only ones they make, and the watch checks make none.
  it.concurrent('probe with --relay-*: every member answers over the relay, run as the flags name it', async () => {
    const from = world.fake.upgrades.length;
    const run = await probe(...RELAY, '--json');
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const seen = jsonOf<ProbeJson>(run);
    expect(seen.members.map((m) => [m.name, m.paths.map((p) => [p.path, p.ok])]).sort()).toEqual(
      world.lab.members.map((m) => [m.name, [['exec-relay', true]]]),
    );
    expect(seen.quorum.ok).toBe(true);
    const commands = execCommands(world, from);
    expect(commands.length).toBeGreaterThan(0);
    for (const argv of commands) {
      expect(argv[0]).toBe(BINARY);
      expect(argv).toEqual(expect.arrayContaining([`--cacert=${PKI}ca.crt`, `--cert=${PKI}client.crt`, `--key=${PKI}client.key`]));
    }
  });

  it.concurrent('watch hands the same settings to every cluster it serves', async () => {
    const management = new KubeConfig();
    management.loadFromString(fs.readFileSync(kubeconfig, 'utf8'));
    const relayTls = { cacert: `${PKI}ca.crt`, cert: `${PKI}client.crt`, key: `${PKI}client.key` };
    const directory = createCapiDirectory({
      management,
      managementSource: fs.readFileSync(kubeconfig, 'utf8'),
      policy: defaultPolicy,
      relay: { relayBinary: BINARY, relayTls },
    });
    expect((await directory.get(`${CAPI_NAMESPACE}/${CAPI_CLUSTER}`)).kube).toMatchObject({ relayBinary: BINARY, relayTls });
  });

  it.concurrent('watch refuses a relative --relay-binary at once, and any --relay flag with --bus', async () => {
    // Both at once: a refusal gets no further than the flags.
    const [relative, remote] = await Promise.all([
      runCli(['watch', '--kubeconfig', kubeconfig, '--state', path.join(dir, 'watch.sqlite'), '--relay-binary', 'etcdctl']),
      runCli(['watch', '--kubeconfig', kubeconfig, '--bus', 'b', '--table', 't', '--relay-cacert', `${PKI}ca.crt`]),
    ]);
    expect(relative.code).toBe(2);
    expect(relative.stderr).toBe(
      'etcd-remediator: --relay-binary: "etcdctl" is not an absolute path: a relative one would resolve in the etcd container\'s working directory\n',
    );
    expect(remote.code).toBe(2);
    expect(remote.stderr).toBe("etcd-remediator: --relay-cacert: not with --bus; the stack's registered cluster policy applies (etcd-remediator register)\n");
  });

  // Last: it removes a member.
  it('remediate a leader whose kubelet is down: leadership moved over the relay with the flags’ files, then removed', async () => {
    const leader = await world.lab.leader();
    world.fake.kubeletDown(leader.name);
    const lab = ['--election-timeout', '500ms', '--timeout', '3s', '--backoff', '300ms'];
    const run = await runCli(
      [
        'remediate',
        '--kubeconfig',
        kubeconfig,
        '--cluster',
        CAPI_CLUSTER,
        '--machine',
        world.machineOf(leader),
        ...RELAY,
        ...lab,
        '--state',
        path.join(dir, 'state.sqlite'),
        '--json',
      ],
      { timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(6);
    expect(jsonOf<CliResult>(run)).toMatchObject({ outcome: 'awaiting-replacement', leaderMove: 'moved', target: { memberId: leader.id } });
    expect(run.stderr).toMatch(new RegExp(`LeaderMoved\\s+leadership moved from ${leader.id} to \\S+ over exec-relay`));
    expect((await world.lab.memberList()).map((m) => m.id)).not.toContain(leader.id);
    // Beyond the run's own 60 s, so a run that does not finish is reported with what it printed.
  }, 90_000);
});
