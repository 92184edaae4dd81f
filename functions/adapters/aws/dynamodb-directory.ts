// The cluster directory in the store's table: each cluster's registration (cluster#<id> / config)
// and, for the intake, which cluster and member an instance id or node name belongs to. Entries
// are cached per container for cacheMs; the TLS credentials come from the SecretSource.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { PolicyInput } from '../../core/policy.ts';
import { UnknownClusterError, type ClusterDirectory, type ClusterEntry, type MemberLocation, type MemberLookup } from '../../ports/cluster-directory.ts';
import { checkRegistration, ClusterRegistrationError } from './cluster-registration.ts';
import type { Item } from './dynamodb-codec.ts';
import { clusterConfigKey, instanceKey, nodeKey, type Key } from './dynamodb-keys.ts';
import { documentClient } from './dynamodb-store.ts';
import type { SecretSource } from './secrets.ts';

export { putCluster, type ClusterRegistration } from './cluster-registration.ts';

/** A policy change reaches every warm container within a minute. */
export const DEFAULT_DIRECTORY_CACHE_MS = 60_000;

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

export function createDynamoDirectory(options: DynamoDirectoryOptions): ClusterDirectory & MemberLookup {
  const doc = documentClient(options.client);
  const cacheMs = options.cacheMs ?? DEFAULT_DIRECTORY_CACHE_MS;
  const clock = options.clock ?? Date.now;
  const read = async (key: Key): Promise<Item | undefined> => (await doc.send(new GetCommand({ TableName: options.tableName, Key: key, ConsistentRead: true }))).Item;

  const entries = cached<ClusterEntry>(cacheMs, clock, async (clusterId) => {
    const item = await read(clusterConfigKey(clusterId));
    if (!item) throw new UnknownClusterError(clusterId);
    return entryOf(item, clusterId, options.secrets, options.policyDefaults);
  });
  // Only found members are cached: an instance registered a moment ago must be found at once.
  const locations = cached<MemberLocation | undefined>(cacheMs, clock, async (pk) => {
    const item = await read({ pk, sk: 'member' });
    return item && typeof item.clusterId === 'string' && typeof item.memberName === 'string' ? { clusterId: item.clusterId, memberName: item.memberName } : undefined;
  });
  return {
    get: (clusterId) => entries(clusterId),
    findByInstance: (instanceId) => locations(instanceKey(instanceId).pk),
    findByNode: (nodeName) => locations(nodeKey(nodeName).pk),
  };
}

async function entryOf(item: Item, clusterId: string, secrets: SecretSource, policyDefaults: PolicyInput | undefined): Promise<ClusterEntry> {
  const { type: _type, pk: _pk, sk: _sk, registeredAt: _at, ...stored } = item;
  const { registration, policy } = checkRegistration(stored, clusterId, policyDefaults);
  const entry: ClusterEntry = { clusterId: registration.clusterId, endpoints: registration.endpoints, policy };
  if (registration.aliases) entry.aliases = registration.aliases;
  if (registration.tlsSecretArn) {
    try {
      entry.tls = await secrets.tlsFiles(registration.tlsSecretArn);
    } catch (error) {
      throw new ClusterRegistrationError(clusterId, 'tlsSecretArn', error instanceof Error ? error.message : String(error));
    }
  }
  return entry;
}

/** A per-container cache of lookups by key; failures and undefined results are not kept. */
function cached<T>(cacheMs: number, clock: () => number, load: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const cache = new Map<string, { at: number; value: Promise<T> }>();
  return (key) => {
    const hit = cache.get(key);
    if (hit && clock() - hit.at < cacheMs) return hit.value;
    const value = load(key);
    cache.set(key, { at: clock(), value });
    const forget = () => {
      if (cache.get(key)?.value === value) cache.delete(key);
    };
    value.then((v) => (v === undefined ? forget() : undefined), forget);
    return value;
  };
}
