// The cluster directory in the store's table: each cluster's registration (cluster#<id> / config)
// and which cluster and member an instance id or node name belongs to (read as the intake reads
// it, dynamodb-intake-lookup.ts). Entries are cached per container for cacheMs; the TLS
// credentials and the kubeconfigs come from the SecretSource, read when the entry is.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PolicyInput } from '../../core/policy/index.ts';
import { UnknownClusterError, type ClusterDirectory, type ClusterEntry, type MemberLookup } from '../../ports/cluster-directory.ts';
import type { KubeAccessConfig } from '../../ports/kube-access.ts';
import { cached } from './cache.ts';
import { checkRegistration, ClusterRegistrationError, type ClusterRegistration } from './cluster-registration.ts';
import type { Item } from './dynamodb-codec.ts';
import { createIntakeLookup, DEFAULT_DIRECTORY_CACHE_MS } from './dynamodb-intake-lookup.ts';
import { clusterConfigKey } from './dynamodb-keys.ts';
import { registeredClusterIds } from './dynamodb-fleet.ts';
import { documentClient } from './dynamodb-store.ts';
import { redacted } from './redacted.ts';
import type { SecretSource } from './secrets.ts';

export { putCluster, type ClusterRegistration } from './cluster-registration.ts';

export { DEFAULT_DIRECTORY_CACHE_MS } from './dynamodb-intake-lookup.ts';

export interface DynamoDirectoryOptions {
  client: DynamoDBClient;
  tableName: string;
  secrets: SecretSource;
  /**
   * Laid under every cluster's own policy (its fields win), e.g. the construct's policyDefaults.
   * Checked by the caller with checkPolicyDefaults; a cluster's entry does not carry them, so a
   * change of defaults applies to every cluster.
   */
  policyDefaults?: PolicyInput;
  cacheMs?: number;
  clock?: () => number;
}

export function createDynamoDirectory(
  options: DynamoDirectoryOptions,
): ClusterDirectory & MemberLookup & { registeredClusterIds(): Promise<readonly string[]> } {
  const doc = documentClient(options.client);
  const cacheMs = options.cacheMs ?? DEFAULT_DIRECTORY_CACHE_MS;
  const clock = options.clock ?? Date.now;
  const entries = cached<ClusterEntry>(cacheMs, clock, async (clusterId) => {
    const { Item: item } = await doc.send(new GetCommand({ TableName: options.tableName, Key: clusterConfigKey(clusterId), ConsistentRead: true }));
    if (!item) throw new UnknownClusterError(clusterId);
    return entryOf(item, clusterId, options.secrets, options.policyDefaults);
  });
  const members = createIntakeLookup({ client: options.client, tableName: options.tableName, cacheMs, clock });
  // Read from the registrations' index items (one Query, their keys only), cached as the entries are.
  const registered = cached<readonly string[]>(cacheMs, clock, () => registeredIds(doc, options.tableName));
  return {
    get: (clusterId) => entries(clusterId),
    registeredClusterIds: () => registered('ids'),
    findByInstance: (id) => members.findByInstance(id),
    findByNode: (name) => members.findByNode(name),
  };
}

/** The registered clusters' ids, uncached: for a reader of the table that needs no cluster's entry (status). */
export const registeredClusterIdsIn = (client: DynamoDBClient, tableName: string): Promise<readonly string[]> =>
  registeredIds(documentClient(client), tableName);

const registeredIds = (doc: DynamoDBDocumentClient, tableName: string): Promise<readonly string[]> => registeredClusterIds({ doc, tableName });

async function entryOf(item: Item, clusterId: string, secrets: SecretSource, policyDefaults: PolicyInput | undefined): Promise<ClusterEntry> {
  const { type: _type, pk: _pk, sk: _sk, registeredAt: _at, ...stored } = item;
  const { registration, policy } = checkRegistration(stored, clusterId, policyDefaults);
  const entry: ClusterEntry = { clusterId: registration.clusterId, endpoints: registration.endpoints, policy };
  if (registration.aliases) entry.aliases = registration.aliases;
  if (registration.metricsUrls) entry.metricsUrls = registration.metricsUrls;
  const { tlsSecretArn } = registration;
  const [tls, kube] = await Promise.all([
    tlsSecretArn ? fromSecret(clusterId, 'tlsSecretArn', secrets.tlsFiles(tlsSecretArn)) : undefined,
    kubeAccessOf(registration, secrets),
  ]);
  if (tls) entry.tls = tls;
  if (kube) entry.kube = kube;
  return entry;
}

/** A secret's value, or the entry's failure naming the cluster, the field and the secret. */
async function fromSecret<T>(clusterId: string, field: string, read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    throw new ClusterRegistrationError(clusterId, field, error instanceof Error ? error.message : String(error));
  }
}

/** The registration's kube settings with their kubeconfigs read; undefined without a workload kubeconfig. */
async function kubeAccessOf(registration: ClusterRegistration, secrets: SecretSource): Promise<KubeAccessConfig | undefined> {
  const { clusterId, workloadKubeconfigSecretArn, etcdNamespace, management, relayBinary, relayTls } = registration;
  if (!workloadKubeconfigSecretArn) return undefined;
  const [workloadKubeconfig, managementKubeconfig] = await Promise.all([
    fromSecret(clusterId, 'workloadKubeconfigSecretArn', secrets.kubeconfig(workloadKubeconfigSecretArn)),
    management ? fromSecret(clusterId, 'management.kubeconfigSecretArn', secrets.kubeconfig(management.kubeconfigSecretArn)) : undefined,
  ]);
  const kube: KubeAccessConfig = { workloadKubeconfig };
  if (etcdNamespace) kube.etcdNamespace = etcdNamespace;
  if (relayBinary) kube.relayBinary = relayBinary;
  if (relayTls) kube.relayTls = relayTls;
  if (management && managementKubeconfig !== undefined) {
    const { namespace, clusterName, machineApiVersion } = management;
    kube.management = { kubeconfig: managementKubeconfig, namespace, clusterName, ...(machineApiVersion ? { machineApiVersion } : {}) };
  }
  const capi = management ? `, management kubeconfig for Cluster ${management.namespace}/${management.clusterName}` : '';
  return redacted(kube, `[KubeAccessConfig: workload kubeconfig${capi}; redacted]`);
}
