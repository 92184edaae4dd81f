// What the intake reads of the directory, and nothing more: which cluster and member an instance
// or node runs (its `instance#` / `node#` item), and whether a cluster is registered (its
// `cluster#<id>` item's key alone). Each read projects only the attributes it needs, so the
// intake's role can be held to them (infra/cdk/permissions.ts grants exactly INTAKE_READS): it
// never sees an entry's secret ARNs, and reads no secret.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { ClusterRegistry, MemberLocation, MemberLookup } from '../../ports/cluster-directory.ts';
import { cached } from './cache.ts';
import type { Item } from './dynamodb-codec.ts';
import { clusterConfigKey, instanceKey, nodeKey, type Key } from './dynamodb-keys.ts';
import { documentClient } from './dynamodb-store.ts';
import { table } from './dynamodb-table.ts';

/** A policy change, or a new registration, reaches every warm container within a minute. */
export const DEFAULT_DIRECTORY_CACHE_MS = 60_000;

const LOCATION_ATTRIBUTES = ['clusterId', 'memberName'] as const;

/** The items and attributes the intake reads: what its role is granted, as IAM condition values. */
export const INTAKE_READS = {
  partitionKeyPrefixes: [instanceKey('').pk, nodeKey('').pk, clusterConfigKey('').pk],
  // IAM's attribute condition must list the key attributes too, or no read passes it.
  attributes: [table.partitionKey.name, table.sortKey.name, ...LOCATION_ATTRIBUTES],
} as const;

export interface IntakeLookupOptions {
  client: DynamoDBClient;
  tableName: string;
  cacheMs?: number;
  clock?: () => number;
}

export function createIntakeLookup(options: IntakeLookupOptions): MemberLookup & ClusterRegistry {
  const doc = documentClient(options.client);
  const cacheMs = options.cacheMs ?? DEFAULT_DIRECTORY_CACHE_MS;
  const clock = options.clock ?? Date.now;
  const read = async (key: Key, attributes: readonly string[]): Promise<Item | undefined> => {
    const names = Object.fromEntries(attributes.map((attribute, i) => [`#a${i}`, attribute]));
    const projection = Object.keys(names).join(', ');
    const command = new GetCommand({
      TableName: options.tableName,
      Key: key,
      ConsistentRead: true,
      ProjectionExpression: projection,
      ExpressionAttributeNames: names,
    });
    return (await doc.send(command)).Item;
  };
  const location = async (key: Key): Promise<MemberLocation | undefined> => {
    const item = await read(key, LOCATION_ATTRIBUTES);
    return item && typeof item.clusterId === 'string' && typeof item.memberName === 'string'
      ? { clusterId: item.clusterId, memberName: item.memberName }
      : undefined;
  };
  // Only what is found is cached: an instance or cluster registered a moment ago is found at once.
  const byInstance = cached(cacheMs, clock, (instanceId) => location(instanceKey(instanceId)));
  const byNode = cached(cacheMs, clock, (nodeName) => location(nodeKey(nodeName)));
  const registered = cached<true | undefined>(cacheMs, clock, async (clusterId) =>
    (await read(clusterConfigKey(clusterId), [table.partitionKey.name])) ? true : undefined,
  );
  return {
    findByInstance: byInstance,
    findByNode: byNode,
    isRegistered: async (clusterId) => (await registered(clusterId)) === true,
  };
}
