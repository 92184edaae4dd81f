// Where the exec relay finds etcdctl and its certificates inside the etcd pods, as a user gives it:
// probe, plan and remediate's --relay-* flags, a run config cluster's relayBinary and relayTls,
// watch's flags for every cluster, and register's flags into the AWS directory. One rule for all:
// an absolute path with no whitespace or shell character, the three certificates together, and
// only where a kubeconfig and the exec-relay path make something run them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRegistration, ClusterRegistrationError } from '../../../functions/adapters/aws/cluster-registration.ts';
import { podPathProblem } from '../../../functions/core/common/pod-path.ts';
import { UsageError } from '../../../infra/cli/args.ts';
import { clusterAccessFromFlags, relayFromFlags } from '../../../infra/cli/cluster-flags.ts';
import { ConfigError, loadConfig, withKubeAccess } from '../../../infra/cli/config.ts';
import { registrationFromFlags } from '../../../infra/cli/register.ts';
import { KUBECONFIG } from '../runtime/helpers.ts';

const TLS = { cacert: '/etc/etcd/pki/ca.crt', cert: '/etc/etcd/pki/client.crt', key: '/etc/etcd/pki/client.key' };
const TLS_FLAGS = { 'relay-cacert': TLS.cacert, 'relay-cert': TLS.cert, 'relay-key': TLS.key };
const WORKLOAD = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-remediator/prod-kubeconfig-GhIjKl';

describe('a path inside the etcd pod', () => {
  it.each([
    '/usr/local/bin/etcdctl',
    '/opt/bitnami/etcd/bin/etcdctl',
    '/var/lib/rancher/rke2/server/tls/etcd/server-ca.crt',
    '/etc/kubernetes/pki/etcd/healthcheck-client.key',
  ])('%s is taken', (text) => {
    expect(podPathProblem(text)).toBeUndefined();
  });

  it.each([
    ['', 'must not be empty'],
    ['etcdctl', '"etcdctl" is not an absolute path: a relative one would resolve in the etcd container\'s working directory'],
    ['./bin/etcdctl', 'is not an absolute path'],
    ['/usr/local/bin/etcdctl --debug', '"/usr/local/bin/etcdctl --debug" holds a space: a path inside the etcd pod takes letters, digits'],
    ['/etc/pki/ca.crt\n', 'holds "\\n"'],
    ['/etc/pki/$HOME/ca.crt', 'holds "$"'],
    ['/etc/pki/ca.crt;rm', 'holds ";"'],
    ['/etc/pki/`id`', 'holds "`"'],
    ['/etc/kubernetes/pki/etcd/', 'ends in /: name the file, not its directory'],
    [`/${'a'.repeat(4_100)}`, 'is longer than 4096 characters'],
  ])('refused: %#, %s', (text, says) => {
    expect(podPathProblem(text)).toContain(says);
  });
});

describe('probe, plan and remediate: --relay-binary, --relay-cacert, --relay-cert, --relay-key', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-flags-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = path.join(dir, 'kc.yaml');
  fs.writeFileSync(kubeconfig, KUBECONFIG);

  it('reach the cluster’s kube access as relayBinary and relayTls', async () => {
    const cluster = await clusterAccessFromFlags({ kubeconfig, 'relay-binary': '/opt/etcd/bin/etcdctl', ...TLS_FLAGS });
    expect(cluster.kube).toEqual({ workloadKubeconfig: KUBECONFIG, relayBinary: '/opt/etcd/bin/etcdctl', relayTls: TLS });
  });

  it('each alone: the binary without certificates, the certificates without a binary', async () => {
    expect((await clusterAccessFromFlags({ kubeconfig, 'relay-binary': '/opt/etcd/bin/etcdctl' })).kube).toEqual({
      workloadKubeconfig: KUBECONFIG,
      relayBinary: '/opt/etcd/bin/etcdctl',
    });
    expect((await clusterAccessFromFlags({ kubeconfig, ...TLS_FLAGS })).kube).toEqual({ workloadKubeconfig: KUBECONFIG, relayTls: TLS });
  });

  it('none given: kubeadm’s, left to the relay (no relay field at all)', async () => {
    expect((await clusterAccessFromFlags({ kubeconfig })).kube).toEqual({ workloadKubeconfig: KUBECONFIG });
  });

  it.each([
    {
      flags: { 'relay-binary': 'etcdctl' },
      says: '--relay-binary: "etcdctl" is not an absolute path: a relative one would resolve in the etcd container\'s working directory',
    },
    {
      flags: { 'relay-binary': '/usr/bin/etcdctl --insecure-skip-tls-verify' },
      says: '--relay-binary: "/usr/bin/etcdctl --insecure-skip-tls-verify" holds a space: ',
    },
    { flags: { ...TLS_FLAGS, 'relay-key': 'client.key' }, says: '--relay-key: "client.key" is not an absolute path' },
    { flags: { ...TLS_FLAGS, 'relay-cacert': '/etc/pki/$(id)/ca.crt' }, says: '--relay-cacert: "/etc/pki/$(id)/ca.crt" holds "$": ' },
    {
      flags: { 'relay-cert': TLS.cert, 'relay-key': TLS.key },
      says: "--relay-cacert: is required with --relay-cert and --relay-key: the relay's etcdctl takes the CA, the client certificate and its key together (kubeadm's three when none is given)",
    },
    { flags: { 'relay-cacert': TLS.cacert }, says: '--relay-cert: is required with --relay-cacert: ' },
    { flags: { 'relay-cacert': TLS.cacert, 'relay-cert': TLS.cert }, says: '--relay-key: is required with --relay-cacert and --relay-cert: ' },
    {
      flags: { 'relay-binary': '/opt/etcd/bin/etcdctl', paths: 'port-forward' },
      says: '--relay-binary: the path order (port-forward) has no exec-relay, so nothing would run it: add exec-relay to --paths',
    },
  ])('refuses $flags: $says', async ({ flags, says }) => {
    const refusal = clusterAccessFromFlags({ kubeconfig, ...flags });
    await expect(refusal).rejects.toBeInstanceOf(UsageError);
    await expect(clusterAccessFromFlags({ kubeconfig, ...flags })).rejects.toThrow(says);
  });

  it('refuses them without --kubeconfig: there is no etcd pod to run etcdctl in', async () => {
    await expect(clusterAccessFromFlags({ endpoints: 'http://127.0.0.1:2379', 'relay-binary': '/opt/etcd/bin/etcdctl' })).rejects.toThrow(
      new UsageError("--relay-binary: needs --kubeconfig: the exec relay runs etcdctl in the cluster's etcd pods"),
    );
  });
});

describe('watch: the same flags, for every cluster it serves', () => {
  it('reads them by the path order', () => {
    expect(relayFromFlags({ 'relay-binary': '/opt/etcd/bin/etcdctl', ...TLS_FLAGS }, ['port-forward', 'exec-relay'])).toEqual({
      relayBinary: '/opt/etcd/bin/etcdctl',
      relayTls: TLS,
    });
    expect(relayFromFlags({}, ['port-forward', 'exec-relay'])).toEqual({});
  });

  it('refuses them as probe does', () => {
    expect(() => relayFromFlags({ 'relay-key': TLS.key }, ['exec-relay'])).toThrow(
      new UsageError(
        "--relay-cacert: is required with --relay-key: the relay's etcdctl takes the CA, the client certificate and its key together (kubeadm's three when none is given)",
      ),
    );
    expect(() => relayFromFlags({ 'relay-binary': '/opt/etcd/bin/etcdctl' }, ['port-forward'])).toThrow(
      '--relay-binary: the path order (port-forward) has no exec-relay',
    );
  });
});

describe('the run config: a cluster’s relayBinary and relayTls', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-config-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'kc.yaml'), KUBECONFIG);
  let n = 0;
  const configWith = (cluster: Record<string, unknown>): string => {
    const file = path.join(dir, `config-${(n += 1)}.json`);
    fs.writeFileSync(file, JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'prod', kubeconfig: 'kc.yaml', ...cluster }] }));
    return file;
  };

  it('reach the cluster’s kube access', async () => {
    const [cluster] = await withKubeAccess(loadConfig(configWith({ relayBinary: '/opt/etcd/bin/etcdctl', relayTls: TLS })));
    expect(cluster!.kube).toEqual({ workloadKubeconfig: KUBECONFIG, relayBinary: '/opt/etcd/bin/etcdctl', relayTls: TLS });
  });

  it.each([
    { cluster: { relayBinary: 'bin/etcdctl' }, says: 'clusters[0].relayBinary (cluster prod): "bin/etcdctl" is not an absolute path' },
    {
      cluster: { relayTls: { ...TLS, key: '/etc/etcd/pki/client key' } },
      says: 'clusters[0].relayTls.key (cluster prod): "/etc/etcd/pki/client key" holds a space',
    },
    {
      cluster: { relayTls: { cacert: TLS.cacert, cert: TLS.cert } },
      says: 'clusters[0].relayTls.key (cluster prod): is required with relayTls.cacert and relayTls.cert',
    },
    {
      cluster: { relayTls: TLS, paths: ['port-forward'] },
      says: 'clusters[0].relayTls.cacert (cluster prod): the path order (port-forward) has no exec-relay, so nothing would run it: add exec-relay to paths',
    },
    { cluster: { relayTls: TLS, policy: { pathOrder: ['port-forward'] } }, says: 'add exec-relay to policy.pathOrder' },
    {
      cluster: { kubeconfig: undefined, endpoints: ['http://127.0.0.1:2379'], relayBinary: '/opt/etcd/bin/etcdctl' },
      says: "clusters[0].relayBinary (cluster prod): needs kubeconfig: the exec relay runs etcdctl in the cluster's etcd pods",
    },
    { cluster: { relayTls: { ...TLS, ca: '/x' } }, says: 'clusters[0].relayTls.ca' },
    { cluster: { relayBinary: 7 }, says: 'clusters[0].relayBinary' },
  ])('refuses $cluster, naming the cluster and the field', ({ cluster, says }) => {
    const file = configWith(cluster);
    expect(() => loadConfig(file)).toThrow(ConfigError);
    expect(() => loadConfig(file)).toThrow(says);
  });
});

describe('register: the relay’s paths in the AWS directory', () => {
  const base = { cluster: 'prod', endpoints: 'https://10.0.0.1:2379', 'workload-kubeconfig-secret': WORKLOAD };

  it('the flags become the registration’s relayBinary and relayTls, which the directory’s check keeps', () => {
    const registration = registrationFromFlags({ ...base, 'relay-binary': '/opt/etcd/bin/etcdctl', ...TLS_FLAGS });
    expect(registration).toEqual({
      clusterId: 'prod',
      endpoints: ['https://10.0.0.1:2379'],
      workloadKubeconfigSecretArn: WORKLOAD,
      relayBinary: '/opt/etcd/bin/etcdctl',
      relayTls: TLS,
    });
    expect(checkRegistration(registration).registration).toMatchObject({ relayBinary: '/opt/etcd/bin/etcdctl', relayTls: TLS });
  });

  it.each([
    { flags: { 'relay-binary': 'etcdctl' }, says: '--relay-binary: "etcdctl" is not an absolute path' },
    { flags: { 'relay-cert': TLS.cert }, says: '--relay-cacert: is required with --relay-cert' },
    {
      flags: { 'workload-kubeconfig-secret': undefined, 'relay-binary': '/opt/etcd/bin/etcdctl' },
      says: 'cluster prod: --relay-binary: needs --workload-kubeconfig-secret: the exec relay runs etcdctl in the etcd pods of the workload cluster',
    },
    { flags: { 'workload-kubeconfig-secret': undefined, ...TLS_FLAGS }, says: 'cluster prod: --relay-cacert: needs --workload-kubeconfig-secret' },
  ])('refuses $flags: $says', ({ flags, says }) => {
    const values = Object.fromEntries(Object.entries({ ...base, ...flags }).filter(([, v]) => v !== undefined));
    expect(() => registrationFromFlags(values)).toThrow(UsageError);
    expect(() => registrationFromFlags(values)).toThrow(says);
  });

  it('an entry edited by hand is checked the same way when the functions read it', () => {
    const entry = { clusterId: 'prod', endpoints: ['https://10.0.0.1:2379'], workloadKubeconfigSecretArn: WORKLOAD };
    expect(() => checkRegistration({ ...entry, relayBinary: 'etcdctl' }, 'prod')).toThrow(
      new ClusterRegistrationError('prod', 'relayBinary', podPathProblem('etcdctl')!),
    );
    expect(() => checkRegistration({ ...entry, relayTls: { cacert: TLS.cacert, cert: TLS.cert } }, 'prod')).toThrow(
      new ClusterRegistrationError('prod', 'relayTls.key', 'is required: the relay takes the CA, the client certificate and its key together'),
    );
  });
});
