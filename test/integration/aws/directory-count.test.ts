// The directory's registered clusters, for the storm guard: one index item a registration, read
// by a Query of their keys (no scan), cached per container as the entries are.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDynamoDirectory, putCluster } from '../../../functions/adapters/aws/dynamodb-directory.ts';
import type { SecretSource } from '../../../functions/adapters/aws/secrets.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';

const secrets: SecretSource = { tlsFiles: async () => ({ ca: Buffer.from(''), cert: Buffer.from(''), key: Buffer.from('') }), kubeconfig: async () => '' };
let dynamo: Dynalite;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo?.close());

it('lists each registered cluster once, and a cached list until cacheMs passes', async () => {
  const tableName = await dynamo.createTable();
  let now = 1_000;
  const directory = createDynamoDirectory({ client: dynamo.client(), tableName, secrets, cacheMs: 60_000, clock: () => now });
  expect(await directory.registeredClusterIds()).toEqual([]);
  for (const clusterId of ['prod-a', 'prod-b', 'prod-a']) await putCluster(dynamo.client(), tableName, { clusterId, endpoints: ['http://127.0.0.1:2379'] });
  expect(await directory.registeredClusterIds()).toEqual([]);
  now += 60_000;
  expect(await directory.registeredClusterIds()).toEqual(['prod-a', 'prod-b']);
});
