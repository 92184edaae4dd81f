// `register` through the real binary and SDK client to dynalite: the cluster is read back by the
// directory the functions use, with its members found by instance and node; bad input is one
// line naming the flag, and nothing is written.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDynamoDirectory } from '../../../functions/adapters/aws/dynamodb-directory.ts';
import type { SecretSource } from '../../../functions/adapters/aws/secrets.ts';
import { defaultPolicy } from '../../../functions/core/policy/policy.ts';
import { UnknownClusterError } from '../../../functions/ports/cluster-directory.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { limitedRunCli, runCli } from './support.ts';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-remediator/prod-AbCdEf';
const WORKLOAD = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-remediator/prod-kubeconfig-GhIjKl';
const MANAGEMENT = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-remediator/mgmt-kubeconfig-MnOpQr';
const secrets: SecretSource = {
  tlsFiles: async () => ({ ca: Buffer.from('CA'), cert: Buffer.from('CERT'), key: Buffer.from('KEY') }),
  kubeconfig: async (arn) => `clusters: [] # from ${arn}\n`,
};

let dynamo: Dynalite;
let env: Record<string, string>;
let dir: string;
beforeAll(async () => {
  dynamo = await startDynalite();
  env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' };
  dir = mkdtempSync(join(tmpdir(), 'register-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dynamo?.close();
});

/** Kube flags given wrong: each refusal names the flag to fix. */
function kubeRefusals(): { args: string[]; says: string }[] {
  const base = ['--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379'];
  const workload = ['--workload-kubeconfig-secret', WORKLOAD];
  const capi = ['--management-kubeconfig-secret', MANAGEMENT, '--capi-namespace', 'capi-prod', '--capi-cluster', 'prod'];
  return [
    {
      args: [...base, '--workload-kubeconfig-secret', 'prod-kubeconfig'],
      says: 'cluster prod: --workload-kubeconfig-secret: must be a Secrets Manager secret ARN',
    },
    { args: [...base, '--etcd-namespace', 'kube-system'], says: 'cluster prod: --etcd-namespace: needs --workload-kubeconfig-secret: members are matched' },
    { args: [...base, ...capi], says: 'cluster prod: --management-kubeconfig-secret: needs --workload-kubeconfig-secret' },
    {
      args: [...base, ...workload, '--capi-cluster', 'prod'],
      says: "--capi-cluster: needs --management-kubeconfig-secret, the Cluster API management cluster's kubeconfig",
    },
    {
      args: [...base, ...workload, '--management-kubeconfig-secret', MANAGEMENT, '--capi-cluster', 'prod'],
      says: "--management-kubeconfig-secret: needs --capi-namespace: where the cluster's Machines are",
    },
    {
      args: [...base, ...workload, '--management-kubeconfig-secret', MANAGEMENT],
      says: '--management-kubeconfig-secret: needs --capi-namespace and --capi-cluster',
    },
    {
      args: [...base, ...workload, ...capi.slice(0, 2), '--capi-namespace', 'Capi_Prod', '--capi-cluster', 'prod'],
      says: 'cluster prod: --capi-namespace: must be a Kubernetes namespace name',
    },
    { args: [...base, ...workload, ...capi, '--machine-api-version', 'v1alpha4'], says: 'cluster prod: --machine-api-version: ' },
    {
      args: [...base, ...workload, ...capi.slice(0, 4), '--capi-cluster', 'Prod Cluster'],
      says: 'cluster prod: --capi-cluster: must be a Cluster API Cluster name',
    },
    { args: [...base, ...workload, '--relay-binary', 'bin/etcdctl'], says: '--relay-binary: "bin/etcdctl" is not an absolute path' },
    { args: [...base, ...workload, '--relay-cacert', '/etc/etcd/pki/ca.crt'], says: '--relay-cert: is required with --relay-cacert' },
    { args: [...base, '--relay-binary', '/opt/etcd/bin/etcdctl'], says: 'cluster prod: --relay-binary: needs --workload-kubeconfig-secret' },
  ];
}

describe('etcd-remediator register', () => {
  let table: string;
  const directory = () => createDynamoDirectory({ client: dynamo.client(), tableName: table, secrets, cacheMs: 0 });
  const register = (...args: string[]) => runCli(['register', '--table', table, ...args], { env });
  beforeEach(async () => {
    table = await dynamo.createTable();
  });

  it('registers a cluster the directory reads back: endpoints, secret, members by instance and node, aliases, policy', async () => {
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ grace: '2m', electionTimeout: '500ms', backoff: { cap: '1m' } }));
    const run = await register(
      '--cluster',
      'prod',
      '--endpoints',
      'https://10.0.0.1:2379,https://10.0.0.2:2379',
      '--tls-secret',
      ARN,
      '--member',
      'etcd-a=i-0a',
      '--member',
      'etcd-b=i-0b',
      '--node',
      'etcd-a=ip-10-0-0-1',
      '--alias',
      'prod-cp-7xk2p=etcd-a',
      '--policy',
      policy,
    );
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(
      `registered cluster prod in table ${table}: 2 endpoints; members etcd-a (i-0a, ip-10-0-0-1), etcd-b (i-0b); TLS from ${ARN}; ` +
        'policy {"graceMs":120000,"backoff":{"capMs":60000},"electionTimeoutMs":500}\n',
    );
    const entry = await directory().get('prod');
    expect(entry).toMatchObject({
      endpoints: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'],
      aliases: { 'prod-cp-7xk2p': 'etcd-a' },
      policy: { ...defaultPolicy, graceMs: 120_000, electionTimeoutMs: 500, backoff: { baseMs: 5_000, capMs: 60_000 } },
    });
    expect(entry.tls?.ca.toString()).toBe('CA');
    expect(await directory().findByInstance('i-0b')).toEqual({ clusterId: 'prod', memberName: 'etcd-b' });
    expect(await directory().findByNode('ip-10-0-0-1')).toEqual({ clusterId: 'prod', memberName: 'etcd-a' });
  });

  it('--json prints the registration; registering again replaces it and drops lookups no longer given', async () => {
    await register('--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--member', 'etcd-a=i-0a');
    const run = await register('--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2380', '--member', 'etcd-c=i-0c', '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      clusterId: 'prod',
      endpoints: ['http://127.0.0.1:2380'],
      members: [{ memberName: 'etcd-c', instanceId: 'i-0c' }],
    });
    expect(await directory().findByInstance('i-0a')).toBeUndefined();
    expect((await directory().get('prod')).endpoints).toEqual(['http://127.0.0.1:2380']);
  });

  it('an instance registered to another cluster: exit 2 naming the flag and the cluster', async () => {
    await register('--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--member', 'etcd-a=i-0a');
    const run = await register('--cluster', 'staging', '--endpoints', 'http://127.0.0.1:3379', '--member', 'x=i-0a');
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('etcd-remediator: cluster staging: --member: i-0a is registered to cluster prod\n');
    await expect(directory().get('staging')).rejects.toBeInstanceOf(UnknownClusterError);
  });

  it('--dry-run checks and prints, and writes nothing', async () => {
    const run = await register('--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--dry-run');
    expect(run.stdout).toBe(
      `would register cluster prod in table ${table}: 1 endpoint; no members (health signals cannot name an instance or node of it); no TLS; the stack’s default policy\n`,
    );
    await expect(directory().get('prod')).rejects.toBeInstanceOf(UnknownClusterError);
  });

  it('a secret outside etcd-remediator/ is registered, with a note that the stack may not read it', async () => {
    const run = await register(
      '--cluster',
      'prod',
      '--endpoints',
      'https://10.0.0.1:2379',
      '--tls-secret',
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:other-AbC',
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^note: the stack's functions may read only secrets named etcd-remediator\/\* unless its secretArnPattern allows this one \(--tls-secret\)\n$/,
    );
  });

  it('registers kube access the directory resolves: the workload kubeconfig, the etcd namespace, the Cluster API management cluster', async () => {
    const run = await register(
      '--cluster',
      'prod',
      '--endpoints',
      'https://10.0.0.1:2379',
      '--workload-kubeconfig-secret',
      WORKLOAD,
      '--etcd-namespace',
      'etcd',
      '--management-kubeconfig-secret',
      MANAGEMENT,
      '--capi-namespace',
      'capi-prod',
      '--capi-cluster',
      'prod',
      '--machine-api-version',
      'v1beta2',
    );
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(
      `registered cluster prod in table ${table}: 1 endpoint; no members (health signals cannot name an instance or node of it); no TLS; ` +
        `workload kubeconfig from ${WORKLOAD} (etcd pods in etcd); Cluster API Cluster capi-prod/prod through the management kubeconfig from ${MANAGEMENT}; the stack’s default policy\n`,
    );
    expect((await directory().get('prod')).kube).toEqual({
      workloadKubeconfig: `clusters: [] # from ${WORKLOAD}\n`,
      etcdNamespace: 'etcd',
      management: { kubeconfig: `clusters: [] # from ${MANAGEMENT}\n`, namespace: 'capi-prod', clusterName: 'prod', machineApiVersion: 'v1beta2' },
    });
  });

  it('registers where the exec relay finds etcdctl and its certificates in the etcd pods; the directory hands them to the relay', async () => {
    const relayTls = { cacert: '/etc/etcd/pki/ca.crt', cert: '/etc/etcd/pki/client.crt', key: '/etc/etcd/pki/client.key' };
    const run = await register(
      '--cluster',
      'prod',
      '--endpoints',
      'https://10.0.0.1:2379',
      '--workload-kubeconfig-secret',
      WORKLOAD,
      '--relay-binary',
      '/opt/etcd/bin/etcdctl',
      '--relay-cacert',
      relayTls.cacert,
      '--relay-cert',
      relayTls.cert,
      '--relay-key',
      relayTls.key,
    );
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(
      `; exec relay in the etcd pods: etcdctl /opt/etcd/bin/etcdctl and certificates ${relayTls.cacert}, ${relayTls.cert}, ${relayTls.key}; `,
    );
    expect((await directory().get('prod')).kube).toEqual({
      workloadKubeconfig: `clusters: [] # from ${WORKLOAD}\n`,
      relayBinary: '/opt/etcd/bin/etcdctl',
      relayTls,
    });
  });

  it('--json prints the kube fields as the registration holds them; a kubeconfig secret outside the prefix gets its note', async () => {
    const other = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:kube/prod-AbC';
    const run = await register('--cluster', 'prod', '--endpoints', 'https://10.0.0.1:2379', '--workload-kubeconfig-secret', other, '--json', '--dry-run');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ clusterId: 'prod', endpoints: ['https://10.0.0.1:2379'], workloadKubeconfigSecretArn: other });
    expect(run.stderr).toBe(
      "note: the stack's functions may read only secrets named etcd-remediator/* unless its secretArnPattern allows this one (--workload-kubeconfig-secret)\n",
    );
  });

  it('registers where each member serves /metrics (--metrics-url, by member name or id); the directory reads them back', async () => {
    const run = await register(
      '--cluster',
      'prod',
      '--endpoints',
      'https://10.0.0.1:2379',
      '--metrics-url',
      'etcd-a=http://127.0.0.1:2381',
      '--metrics-url',
      '8e9e05c52164694d=https://10.0.0.2:2381',
    );
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('; metrics of etcd-a at http://127.0.0.1:2381, 8e9e05c52164694d at https://10.0.0.2:2381; ');
    expect((await directory().get('prod')).metricsUrls).toEqual({ 'etcd-a': 'http://127.0.0.1:2381', '8e9e05c52164694d': 'https://10.0.0.2:2381' });
  });

  it('a table that does not exist: exit 1, one line naming it', async () => {
    const run = await runCli(['register', '--table', 'nope', '--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379'], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^etcd-remediator: writing cluster prod to table nope failed: ResourceNotFoundException/);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  // Refusals write nothing, so they share one table and run side by side, two processes at a time.
  describe('refusals', () => {
    let refusals: string;
    const refused = limitedRunCli();
    beforeAll(async () => {
      refusals = await dynamo.createTable();
    });
    it.concurrent.each([
      { args: ['--endpoints', 'http://127.0.0.1:2379'], says: '--cluster is required' },
      { args: ['--cluster', 'prod'], says: '--endpoints is required' },
      { args: ['--cluster', 'prod', '--endpoints', '10.0.0.1:2379'], says: '--endpoints: "10.0.0.1:2379" is not a client URL' },
      { args: ['--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--member', 'i-0a'], says: '--member: "i-0a" is not NAME=INSTANCE_ID' },
      {
        args: ['--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--member', 'a=i-1', '--member', 'a=i-2'],
        says: '--member: member a is given twice (i-1 and i-2)',
      },
      {
        args: ['--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--member', 'a=i-1', '--member', 'b=i-1'],
        says: "cluster prod: --member: i-1 is also members.0's",
      },
      {
        args: ['--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--tls-secret', 'prod'],
        says: 'cluster prod: --tls-secret: must be a Secrets Manager secret ARN',
      },
      {
        args: ['--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--policy', '/nonexistent.json'],
        says: '--policy /nonexistent.json: cannot read: ENOENT',
      },
      { args: ['--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--metrics-url', 'etcd-a'], says: '--metrics-url: "etcd-a" is not NAME=URL' },
      {
        args: ['--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--metrics-url', 'etcd-a=127.0.0.1:2381'],
        says: 'cluster prod: --metrics-url etcd-a: must be an http or https URL',
      },
      {
        args: [
          '--cluster',
          'prod',
          '--endpoints',
          'http://127.0.0.1:2379',
          '--metrics-url',
          'etcd-a=http://127.0.0.1:2381',
          '--metrics-url',
          'etcd-a=http://127.0.0.1:2382',
        ],
        says: '--metrics-url: member etcd-a is given twice',
      },
      ...kubeRefusals(),
    ])('$says: exit 2, one line, nothing written', async ({ args, says }) => {
      const run = await refused(['register', '--table', refusals, ...args], { env });
      expect(run.code).toBe(2);
      expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining(says)]);
      await expect(createDynamoDirectory({ client: dynamo.client(), tableName: refusals, secrets, cacheMs: 0 }).get('prod')).rejects.toBeInstanceOf(
        UnknownClusterError,
      );
    });
  });

  it('a policy file with a bad field names the file and the field', async () => {
    const policy = join(dir, 'bad-policy.json');
    writeFileSync(policy, JSON.stringify({ electionTimeout: '10ms', grace: '1m' }));
    const run = await register('--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--policy', policy);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `etcd-remediator: --policy ${policy}: electionTimeout: must be at least 100ms (etcd's default is 1s): evidence samples must be one election timeout apart\n`,
    );
    writeFileSync(policy, JSON.stringify({ graceSeconds: 60 }));
    expect((await register('--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--policy', policy)).stderr).toBe(
      `etcd-remediator: --policy ${policy}: graceSeconds: is not a known field\n`,
    );
  });

  it('a policy whose remediate budget is beyond its Lambda timeout: exit 2, one line naming the field and the numbers, nothing written', async () => {
    const policy = join(dir, 'oversize-policy.json');
    writeFileSync(policy, JSON.stringify({ snapshotBeforeRemove: true, actuatorTimeout: '10m' }));
    const run = await register('--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--policy', policy);
    expect(run.code).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        /^etcd-remediator: cluster prod: --policy: actuatorTimeoutMs: remediate needs 994 s at 9 members \(.*actuatorTimeoutMs 600 s.*\), but its Lambda timeout is 900 s less a 60 s margin: lower actuatorTimeoutMs$/,
      ),
    ]);
    await expect(directory().get('prod')).rejects.toBeInstanceOf(UnknownClusterError);
  });

  it('--help prints its usage and exits 0', async () => {
    const run = await runCli(['register', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: etcd-remediator register --table NAME --cluster ID --endpoints/);
  });
});
