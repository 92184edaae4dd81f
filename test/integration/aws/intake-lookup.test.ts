// The intake's lookup on dynalite: an instance or node is mapped to its cluster and member, a
// cluster is known to be registered, and every request stays inside what the intake's role is
// granted (INTAKE_READS): GetItem on the lookup and cluster items, projected to the allowed
// attributes, so no reply carries an entry's secret ARNs.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { putCluster, type ClusterRegistration } from '../../../functions/adapters/aws/dynamodb-directory.ts';
import { createIntakeLookup, INTAKE_READS } from '../../../functions/adapters/aws/dynamodb-intake-lookup.ts';
import { startDynalite, type Dynalite, type DynamoExchange } from '../../support/dynalite.ts';

const TLS_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-remediator/prod-tls-AbCdEf';
const KUBECONFIG_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-remediator/prod-workload-kubeconfig-GhIjKl';

const prod: ClusterRegistration = {
  clusterId: 'prod',
  endpoints: ['https://10.0.0.1:2379'],
  tlsSecretArn: TLS_ARN,
  workloadKubeconfigSecretArn: KUBECONFIG_ARN,
  members: [
    { memberName: 'etcd-a', instanceId: 'i-0a1b2c3d4e5f60718', nodeName: 'ip-10-0-0-1' },
    { memberName: 'etcd-b', instanceId: 'i-0b1c2d3e4f5061728' },
  ],
};

let dynamo: Dynalite;
const exchanges: DynamoExchange[] = [];
beforeAll(async () => {
  dynamo = await startDynalite({ onReply: (exchange) => void exchanges.push(exchange) });
});
afterAll(async () => dynamo.close());

/** One request as IAM sees it: the operation, the partition key, the attributes asked for. */
interface Asked {
  operation: string;
  partitionKey: string | undefined;
  attributes: string[] | 'all';
}

function asked(exchange: DynamoExchange): Asked {
  const request = JSON.parse(exchange.request) as {
    Key?: { pk?: { S?: string } };
    ProjectionExpression?: string;
    ExpressionAttributeNames?: Record<string, string>;
  };
  const names = request.ExpressionAttributeNames ?? {};
  const attributes = request.ProjectionExpression ? request.ProjectionExpression.split(',').map((part) => names[part.trim()] ?? part.trim()) : 'all';
  return { operation: exchange.operation, partitionKey: request.Key?.pk?.S, attributes };
}

/** What the intake's GetItem statement admits: a granted prefix, and only granted attributes by projection. */
const granted = ({ operation, partitionKey, attributes }: Asked): boolean =>
  operation === 'GetItem' &&
  partitionKey !== undefined &&
  INTAKE_READS.partitionKeyPrefixes.some((prefix) => partitionKey.startsWith(prefix)) &&
  attributes !== 'all' &&
  attributes.every((a) => (INTAKE_READS.attributes as readonly string[]).includes(a));

describe('intake lookup', () => {
  let tableName: string;
  beforeEach(async () => {
    tableName = await dynamo.createTable();
    await putCluster(dynamo.client(), tableName, prod);
    exchanges.length = 0;
  });
  const lookup = () => createIntakeLookup({ client: dynamo.client(), tableName, cacheMs: 60_000 });

  it('maps an instance and a node to their cluster and member; an unknown one to nothing', async () => {
    const intake = lookup();
    expect(await intake.findByInstance('i-0a1b2c3d4e5f60718')).toEqual({ clusterId: 'prod', memberName: 'etcd-a' });
    expect(await intake.findByInstance('i-0b1c2d3e4f5061728')).toEqual({ clusterId: 'prod', memberName: 'etcd-b' });
    expect(await intake.findByNode('ip-10-0-0-1')).toEqual({ clusterId: 'prod', memberName: 'etcd-a' });
    expect(await intake.findByInstance('i-0ffffffffffffffff')).toBeUndefined();
    expect(await intake.findByNode('ip-10-9-9-9')).toBeUndefined();
  });

  it('knows a registered cluster from an unregistered one, and finds one registered after a miss at once', async () => {
    const intake = lookup();
    expect(await intake.isRegistered('prod')).toBe(true);
    expect(await intake.isRegistered('staging')).toBe(false);
    await putCluster(dynamo.client(), tableName, {
      clusterId: 'staging',
      endpoints: ['https://10.1.0.1:2379'],
      members: [{ memberName: 'etcd-s', instanceId: 'i-0c1d2e3f405162738' }],
    });
    expect(await intake.isRegistered('staging')).toBe(true);
    expect(await intake.findByInstance('i-0c1d2e3f405162738')).toEqual({ clusterId: 'staging', memberName: 'etcd-s' });
  });

  it('asks only what its role is granted, and no answer carries a secret ARN', async () => {
    const intake = lookup();
    await intake.findByInstance('i-0a1b2c3d4e5f60718');
    await intake.findByNode('ip-10-0-0-1');
    await intake.findByInstance('i-0ffffffffffffffff');
    await intake.isRegistered('prod');
    await intake.isRegistered('staging');
    expect(exchanges).toHaveLength(5);
    for (const exchange of exchanges) {
      expect(granted(asked(exchange)), exchange.request).toBe(true);
      expect(exchange.status).toBe(200);
      expect(exchange.reply).not.toContain('secretsmanager');
    }
    // The grant itself is not vacuous: a whole-item read of the cluster's entry is outside it.
    expect(granted({ operation: 'GetItem', partitionKey: 'cluster#prod', attributes: 'all' })).toBe(false);
    expect(granted({ operation: 'GetItem', partitionKey: 'cluster#prod', attributes: ['pk', 'tlsSecretArn'] })).toBe(false);
    expect(granted({ operation: 'GetItem', partitionKey: 'incident#x', attributes: ['pk'] })).toBe(false);
  });

  it('caches what it found: a second ask within cacheMs makes no request', async () => {
    const intake = lookup();
    await intake.findByInstance('i-0a1b2c3d4e5f60718');
    await intake.isRegistered('prod');
    const made = exchanges.length;
    expect(await intake.findByInstance('i-0a1b2c3d4e5f60718')).toEqual({ clusterId: 'prod', memberName: 'etcd-a' });
    expect(await intake.isRegistered('prod')).toBe(true);
    expect(exchanges).toHaveLength(made);
  });
});
