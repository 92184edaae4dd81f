// The cluster directory in the store's table, on dynalite: registering, reading back with the
// policy parsed and the credentials and kubeconfigs from the secret source, the intake's lookups,
// and errors that name the cluster and the field.
import { inspect } from 'node:util';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDynamoDirectory, putCluster, type ClusterRegistration } from '../../../functions/adapters/aws/dynamodb-directory.ts';
import { clusterConfigKey } from '../../../functions/adapters/aws/dynamodb-keys.ts';
import { SecretError, type SecretSource } from '../../../functions/adapters/aws/secrets.ts';
import { defaultPolicy } from '../../../functions/core/policy/policy.ts';
import { UnknownClusterError } from '../../../functions/ports/cluster-directory.ts';
import type { TlsFiles } from '../../../functions/ports/etcd.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-prod-AbCdEf';
const PEM_KEY = '-----BEGIN PRIVATE KEY-----\nsecretsecret\n-----END PRIVATE KEY-----\n';
const WORKLOAD_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-remediator/prod-workload-kubeconfig-GhIjKl';
const MANAGEMENT_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-remediator/mgmt-kubeconfig-MnOpQr';
const kubeconfigText = (server: string, token: string) =>
  `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${server}\nusers:\n- name: u\n  user:\n    token: ${token}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n`;
const KUBECONFIGS: Record<string, string> = {
  [WORKLOAD_ARN]: kubeconfigText('https://prod.example:6443', 'workload-token-s3cr3t'),
  [MANAGEMENT_ARN]: kubeconfigText('https://mgmt.example:6443', 'management-token-s3cr3t'),
};

let dynamo: Dynalite;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo.close();
});

const notFound = (arn: string) => new SecretError(arn, "GetSecretValue failed: ResourceNotFoundException: Secrets Manager can't find the specified secret.");

/** Counts its reads; knows ARN (TLS) and the two kubeconfigs, refuses any other as Secrets Manager would. */
function fakeSecrets(): SecretSource & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    tlsFiles: async (arn: string): Promise<TlsFiles> => {
      reads.push(arn);
      if (arn !== ARN) throw notFound(arn);
      return { ca: Buffer.from('CA'), cert: Buffer.from('CERT'), key: Buffer.from(PEM_KEY) };
    },
    kubeconfig: async (arn: string): Promise<string> => {
      reads.push(arn);
      const text = KUBECONFIGS[arn];
      if (text === undefined) throw notFound(arn);
      return text;
    },
  };
}

const prod: ClusterRegistration = {
  clusterId: 'prod',
  endpoints: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'],
  pathOrder: ['direct', 'exec-relay'],
  policy: { graceMs: 30_000, electionTimeoutMs: 500 },
  aliases: { 'ip-10-0-0-1': 'etcd-a' },
  tlsSecretArn: ARN,
  members: [
    { memberName: 'etcd-a', instanceId: 'i-0a', nodeName: 'ip-10-0-0-1' },
    { memberName: 'etcd-b', instanceId: 'i-0b', nodeName: 'ip-10-0-0-2' },
  ],
};

describe('dynamodb cluster directory', () => {
  let tableName: string;
  let now: number;
  let secrets: ReturnType<typeof fakeSecrets>;
  const directory = (cacheMs?: number) =>
    createDynamoDirectory({ client: dynamo.client(), tableName, secrets, clock: () => now, ...(cacheMs === undefined ? {} : { cacheMs }) });
  const register = (registration: ClusterRegistration) => putCluster(dynamo.client(), tableName, registration);

  beforeEach(async () => {
    tableName = await dynamo.createTable();
    now = 0;
    secrets = fakeSecrets();
  });

  it('reads a registered cluster back: endpoints, the policy parsed with its defaults, aliases and the credentials', async () => {
    await register(prod);
    const entry = await directory().get('prod');
    expect(entry).toEqual({
      clusterId: 'prod',
      endpoints: prod.endpoints,
      policy: { ...defaultPolicy, graceMs: 30_000, electionTimeoutMs: 500, pathOrder: ['direct', 'exec-relay'] },
      aliases: { 'ip-10-0-0-1': 'etcd-a' },
      tls: { ca: Buffer.from('CA'), cert: Buffer.from('CERT'), key: Buffer.from(PEM_KEY) },
    });
    expect(secrets.reads).toEqual([ARN]);
  });

  it('keeps where each member serves /metrics, by member name or id, through the round trip', async () => {
    const metricsUrls = { 'etcd-a': 'http://127.0.0.1:2381', '8e9e05c52164694d': 'https://10.0.0.2:2381/metrics' };
    await register({ ...prod, metricsUrls });
    expect((await directory().get('prod')).metricsUrls).toEqual(metricsUrls);
    await register(prod);
    expect((await directory(0).get('prod')).metricsUrls).toBeUndefined();
  });

  it('a cluster without a secret has no TLS; an unknown cluster is an UnknownClusterError', async () => {
    await register({ clusterId: 'lab', endpoints: ['http://127.0.0.1:2379'] });
    const entry = await directory().get('lab');
    expect(entry).toEqual({ clusterId: 'lab', endpoints: ['http://127.0.0.1:2379'], policy: defaultPolicy });
    await expect(directory().get('nope')).rejects.toBeInstanceOf(UnknownClusterError);
  });

  it('caches entries per container for cacheMs; a re-registration shows after it', async () => {
    await register(prod);
    const dir = directory(1_000);
    await dir.get('prod');
    await register({ ...prod, endpoints: ['https://10.0.0.9:2379'] });
    now = 999;
    expect((await dir.get('prod')).endpoints).toEqual(prod.endpoints);
    expect(secrets.reads).toHaveLength(1);
    now = 1_000;
    expect((await dir.get('prod')).endpoints).toEqual(['https://10.0.0.9:2379']);
  });

  it('finds a member by instance id or node name; unknown ones are undefined and are found once registered', async () => {
    const dir = directory();
    expect(await dir.findByInstance('i-0a')).toBeUndefined();
    await register(prod);
    expect(await dir.findByInstance('i-0a')).toEqual({ clusterId: 'prod', memberName: 'etcd-a' });
    expect(await dir.findByNode('ip-10-0-0-2')).toEqual({ clusterId: 'prod', memberName: 'etcd-b' });
    expect(await dir.findByNode('i-0a')).toBeUndefined();
  });

  it('re-registering drops the lookups of members no longer there', async () => {
    await register(prod);
    await register({
      ...prod,
      members: [
        { memberName: 'etcd-a', instanceId: 'i-0a' },
        { memberName: 'etcd-c', instanceId: 'i-0c' },
      ],
    });
    const dir = directory(0);
    expect(await dir.findByInstance('i-0b')).toBeUndefined();
    expect(await dir.findByNode('ip-10-0-0-1')).toBeUndefined();
    expect(await dir.findByInstance('i-0c')).toEqual({ clusterId: 'prod', memberName: 'etcd-c' });
    expect(await dir.findByInstance('i-0a')).toEqual({ clusterId: 'prod', memberName: 'etcd-a' });
  });

  it('refuses an instance or node registered to another cluster, naming it', async () => {
    await register(prod);
    await expect(register({ clusterId: 'staging', endpoints: ['https://10.1.0.1:2379'], members: [{ memberName: 'x', instanceId: 'i-0b' }] })).rejects.toThrow(
      'cluster staging: members.0.instanceId: i-0b is registered to cluster prod',
    );
    expect(await directory().findByInstance('i-0b')).toEqual({ clusterId: 'prod', memberName: 'etcd-b' });
  });

  describe('a bad registration is refused, naming the cluster and the field', () => {
    const cases: [string, ClusterRegistration, string][] = [
      ['no endpoints', { ...prod, endpoints: [] }, 'cluster prod: endpoints: '],
      ['an endpoint that is no URL', { ...prod, endpoints: ['10.0.0.1:2379 x'] }, 'cluster prod: endpoints.0: '],
      ['a policy value out of range', { ...prod, policy: { electionTimeoutMs: 50 } }, 'cluster prod: policy.electionTimeoutMs: must be at least 100ms'],
      ['a misspelt policy field', { ...prod, policy: { grace: '60s' } as ClusterRegistration['policy'] }, 'cluster prod: policy.grace: is not a known field'],
      ['two path orders that differ', { ...prod, policy: { pathOrder: ['exec-relay'] } }, 'cluster prod: pathOrder: differs from policy.pathOrder; give one'],
      ['a path that does not exist', { ...prod, pathOrder: ['ssh'] as unknown as ClusterRegistration['pathOrder'] }, 'cluster prod: pathOrder.0: '],
      ['a secret that is no ARN', { ...prod, tlsSecretArn: 'etcd-prod' }, 'cluster prod: tlsSecretArn: must be a Secrets Manager secret ARN'],
      [
        'one instance twice',
        {
          ...prod,
          members: [
            { memberName: 'a', instanceId: 'i-1' },
            { memberName: 'b', instanceId: 'i-1' },
          ],
        },
        "cluster prod: members.1.instanceId: i-1 is also members.0's",
      ],
      ['no cluster id', { ...prod, clusterId: '' }, 'cluster (no id): clusterId: '],
      [
        'a metrics URL that is no http or https URL',
        { ...prod, metricsUrls: { 'etcd-a': '127.0.0.1:2381' } },
        'cluster prod: metricsUrls.etcd-a: must be an http or https URL',
      ],
      [
        'a metrics URL with credentials',
        { ...prod, metricsUrls: { 'etcd-b': 'http://u:p@127.0.0.1:2381' } },
        'cluster prod: metricsUrls.etcd-b: carries credentials',
      ],
    ];
    for (const [what, registration, message] of cases) {
      it(what, async () => {
        await expect(register(registration)).rejects.toThrow(message);
        await expect(directory().get(registration.clusterId || 'prod')).rejects.toBeInstanceOf(UnknownClusterError);
      });
    }
  });

  it('an entry edited by hand into a bad metrics URL fails on read, naming the cluster, the field and the member', async () => {
    const doc = DynamoDBDocumentClient.from(dynamo.client());
    await doc.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...clusterConfigKey('prod'),
          type: 'cluster',
          clusterId: 'prod',
          endpoints: ['https://10.0.0.1:2379'],
          metricsUrls: { 'etcd-a': 'ftp://10.0.0.1' },
        },
      }),
    );
    await expect(directory().get('prod')).rejects.toThrow('cluster prod: metricsUrls.etcd-a: must be an http or https URL');
  });

  it('an entry edited by hand into a bad policy fails on read, naming the cluster and the field', async () => {
    const doc = DynamoDBDocumentClient.from(dynamo.client());
    await doc.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...clusterConfigKey('prod'), type: 'cluster', clusterId: 'prod', endpoints: ['https://10.0.0.1:2379'], policy: { graceMs: -1 } },
      }),
    );
    await expect(directory().get('prod')).rejects.toThrow(/^cluster prod: policy\.graceMs: /);
  });

  describe('kube access', () => {
    const kubeProd: ClusterRegistration = {
      ...prod,
      pathOrder: ['direct', 'port-forward', 'exec-relay'],
      workloadKubeconfigSecretArn: WORKLOAD_ARN,
      etcdNamespace: 'etcd-system',
      management: { kubeconfigSecretArn: MANAGEMENT_ARN, namespace: 'capi-prod', clusterName: 'prod', machineApiVersion: 'v1beta2' },
    };

    it('reads the workload and management kubeconfigs from their secrets into the entry’s kube access', async () => {
      await register(kubeProd);
      const entry = await directory().get('prod');
      expect(entry.kube).toEqual({
        workloadKubeconfig: KUBECONFIGS[WORKLOAD_ARN],
        etcdNamespace: 'etcd-system',
        management: { kubeconfig: KUBECONFIGS[MANAGEMENT_ARN], namespace: 'capi-prod', clusterName: 'prod', machineApiVersion: 'v1beta2' },
      });
      expect(entry.tls?.ca.toString()).toBe('CA');
      expect(entry.policy.pathOrder).toEqual(['direct', 'port-forward', 'exec-relay']);
      expect([...secrets.reads].sort()).toEqual([ARN, MANAGEMENT_ARN, WORKLOAD_ARN].sort());
    });

    it('prints redacted: no kubeconfig text in the entry’s JSON or inspection', async () => {
      await register(kubeProd);
      const entry = await directory().get('prod');
      const shown = `${JSON.stringify(entry)}\n${inspect(entry, { depth: 9 })}`;
      expect(shown).toContain('[KubeAccessConfig: workload kubeconfig, management kubeconfig for Cluster capi-prod/prod; redacted]');
      expect(shown).not.toContain('s3cr3t');
      expect(shown).not.toContain('secretsecret');
    });

    it('a workload kubeconfig alone: the kube paths, no Machines; the namespace left to the adapter’s default', async () => {
      await register({ clusterId: 'lab', endpoints: ['http://127.0.0.1:2379'], workloadKubeconfigSecretArn: WORKLOAD_ARN });
      const entry = await directory().get('lab');
      expect(entry.kube).toEqual({ workloadKubeconfig: KUBECONFIGS[WORKLOAD_ARN] });
      expect(entry.tls).toBeUndefined();
      expect(secrets.reads).toEqual([WORKLOAD_ARN]);
    });

    it('no kube access without a workload kubeconfig: no kube in the entry, no kubeconfig read', async () => {
      await register(prod);
      expect((await directory().get('prod')).kube).toBeUndefined();
      expect(secrets.reads).toEqual([ARN]);
    });

    it.each([
      ['workloadKubeconfigSecretArn', { ...kubeProd, workloadKubeconfigSecretArn: WORKLOAD_ARN.replace('prod-workload', 'gone') }],
      ['management.kubeconfigSecretArn', { ...kubeProd, management: { ...kubeProd.management!, kubeconfigSecretArn: MANAGEMENT_ARN.replace('mgmt', 'gone') } }],
    ])('a kubeconfig that cannot be read fails the entry, naming the cluster and %s, and is not cached', async (field, registration) => {
      await register(registration);
      const dir = directory();
      const error = await dir.get('prod').catch((e: unknown) => e);
      expect(String(error)).toMatch(
        new RegExp(
          `^ClusterRegistrationError: cluster prod: ${field.replace('.', '\\.')}: secret arn:aws:secretsmanager:.*:secret:etcd-remediator/gone.*: GetSecretValue failed: ResourceNotFoundException`,
        ),
      );
      await register(kubeProd);
      await expect(dir.get('prod')).resolves.toMatchObject({ kube: { workloadKubeconfig: KUBECONFIGS[WORKLOAD_ARN] } });
    });

    describe('a bad kube registration is refused, naming the field', () => {
      const management = kubeProd.management!;
      const cases: [string, unknown, string][] = [
        [
          'a workload secret that is no ARN',
          { ...kubeProd, workloadKubeconfigSecretArn: 'prod-kubeconfig' },
          'cluster prod: workloadKubeconfigSecretArn: must be a Secrets Manager secret ARN',
        ],
        [
          'a management secret that is no ARN',
          { ...kubeProd, management: { ...management, kubeconfigSecretArn: 'mgmt' } },
          'cluster prod: management.kubeconfigSecretArn: must be a Secrets Manager secret ARN',
        ],
        [
          'no management secret',
          { ...kubeProd, management: { namespace: 'capi-prod', clusterName: 'prod' } },
          'cluster prod: management.kubeconfigSecretArn: ',
        ],
        [
          'the pod’s own service account, which a Lambda has not',
          { ...kubeProd, management: { inCluster: true, namespace: 'capi-prod', clusterName: 'prod' } },
          'cluster prod: management.inCluster: the functions run on Lambda, in no cluster, so there is no service account to use: give kubeconfigSecretArn',
        ],
        [
          'a namespace that is no name',
          { ...kubeProd, management: { ...management, namespace: 'CAPI Prod' } },
          'cluster prod: management.namespace: must be a Kubernetes namespace name',
        ],
        [
          'no Cluster name',
          { ...kubeProd, management: { ...management, clusterName: '' } },
          'cluster prod: management.clusterName: must be a Cluster API Cluster name',
        ],
        [
          'a Machine API version CAPI does not serve',
          { ...kubeProd, management: { ...management, machineApiVersion: 'v1alpha4' } },
          'cluster prod: management.machineApiVersion: ',
        ],
        [
          'an etcd namespace that is no name',
          { ...kubeProd, etcdNamespace: 'kube_system' },
          'cluster prod: etcdNamespace: must be a Kubernetes namespace name',
        ],
        [
          'an etcd namespace without a workload kubeconfig',
          { ...prod, etcdNamespace: 'kube-system' },
          'cluster prod: etcdNamespace: needs workloadKubeconfigSecretArn',
        ],
        ['a management cluster without a workload kubeconfig', { ...prod, management }, 'cluster prod: management: needs workloadKubeconfigSecretArn'],
      ];
      it.each(cases)('%s', async (_, registration, message) => {
        await expect(register(registration as ClusterRegistration)).rejects.toThrow(message);
        await expect(directory().get('prod')).rejects.toBeInstanceOf(UnknownClusterError);
      });
    });

    it('an entry edited by hand to use the service account fails on read, naming the field', async () => {
      const doc = DynamoDBDocumentClient.from(dynamo.client());
      const item = {
        ...clusterConfigKey('prod'),
        type: 'cluster',
        clusterId: 'prod',
        endpoints: ['https://10.0.0.1:2379'],
        workloadKubeconfigSecretArn: WORKLOAD_ARN,
      };
      await doc.send(new PutCommand({ TableName: tableName, Item: { ...item, management: { inCluster: true, namespace: 'capi-prod', clusterName: 'prod' } } }));
      await expect(directory().get('prod')).rejects.toThrow(/^cluster prod: management\.inCluster: the functions run on Lambda/);
      expect(secrets.reads).toEqual([]);
    });
  });

  it('a secret that cannot be read fails the entry, naming the cluster, the field and the secret, and is not cached', async () => {
    const other = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:gone-XyZ';
    await register({ ...prod, tlsSecretArn: other });
    const dir = directory();
    const error = await dir.get('prod').catch((e: unknown) => e);
    expect(String(error)).toContain(`cluster prod: tlsSecretArn: secret ${other}: GetSecretValue failed: ResourceNotFoundException`);
    expect(String(error)).not.toContain('PRIVATE KEY');
    await register(prod);
    await expect(dir.get('prod')).resolves.toMatchObject({ clusterId: 'prod' });
  });
});
