// POLICY_DEFAULTS on dynalite: a cluster registered with its own policy is read back with the
// defaults under it, both through the directory's option and through a Lambda's cold start; a
// policy that gives a step a budget beyond its Lambda timeout, over the defaults or edited by hand,
// is that cluster's entry refused.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDynamoDirectory, putCluster } from '../../../functions/adapters/aws/dynamodb-directory.ts';
import type { SecretSource } from '../../../functions/adapters/aws/secrets.ts';
import { sharedDepsFromEnv } from '../../../functions/aws-wiring/shared-deps.ts';
import { directoryFromEnv } from '../../../functions/aws-wiring/step-deps.ts';
import { defaultPolicy } from '../../../functions/core/policy/policy.ts';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { clusterConfigKey } from '../../../functions/adapters/aws/dynamodb-keys.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';

const noSecret = async (arn: string): Promise<never> => {
  throw new Error(`no secret expected, asked for ${arn}`);
};
const noSecrets: SecretSource = { tlsFiles: noSecret, kubeconfig: noSecret };

const restore = (name: string, value: string | undefined): void => {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
};

let dynamo: Dynalite;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo.close();
});

describe('policy defaults under each cluster’s policy', () => {
  let tableName: string;
  beforeEach(async () => {
    tableName = await dynamo.createTable();
    await putCluster(dynamo.client(), tableName, {
      clusterId: 'prod',
      endpoints: ['https://10.0.0.1:2379'],
      policy: { graceMs: 30_000, backoff: { baseMs: 2_000 } },
    });
    await putCluster(dynamo.client(), tableName, { clusterId: 'lab', endpoints: ['http://127.0.0.1:2379'] });
  });

  it('the directory option: the cluster’s fields win, the defaults fill the rest, the built-in ones after', async () => {
    const directory = createDynamoDirectory({
      client: dynamo.client(),
      tableName,
      secrets: noSecrets,
      policyDefaults: { graceMs: 120_000, dryRun: true, backoff: { capMs: 60_000 } },
    });
    expect((await directory.get('prod')).policy).toEqual({ ...defaultPolicy, graceMs: 30_000, dryRun: true, backoff: { baseMs: 2_000, capMs: 60_000 } });
    expect((await directory.get('lab')).policy).toEqual({ ...defaultPolicy, graceMs: 120_000, dryRun: true, backoff: { baseMs: 5_000, capMs: 60_000 } });
  });

  it('a cold start reads POLICY_DEFAULTS into the directory it builds', async () => {
    // The SDK takes credentials from process.env, as in Lambda; static ones, so no provider looks further.
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = 'test';
    process.env.AWS_SECRET_ACCESS_KEY = 'test';
    try {
      // The steps read the policy; the intake reads no entry at all.
      const env = {
        TABLE_NAME: tableName,
        BUS_NAME: 'remediation',
        AWS_REGION: 'us-east-1',
        AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
        POLICY_DEFAULTS: JSON.stringify({ electionTimeoutMs: 500, allowShrink: true }),
      };
      const deps = { directory: directoryFromEnv(env, sharedDepsFromEnv(env, 'probe-members')) };
      expect((await deps.directory.get('prod')).policy).toMatchObject({ graceMs: 30_000, electionTimeoutMs: 500, allowShrink: true });
      expect((await deps.directory.get('lab')).policy).toMatchObject({ graceMs: defaultPolicy.graceMs, electionTimeoutMs: 500, allowShrink: true });
    } finally {
      restore('AWS_ACCESS_KEY_ID', saved.id);
      restore('AWS_SECRET_ACCESS_KEY', saved.secret);
    }
  });

  it('what is stored is the cluster’s own policy: the defaults are never written into it', async () => {
    const plain = createDynamoDirectory({ client: dynamo.client(), tableName, secrets: noSecrets });
    expect((await plain.get('lab')).policy).toEqual(defaultPolicy);
  });
});

describe('the budget rule when the directory is read', () => {
  let tableName: string;
  beforeEach(async () => {
    tableName = await dynamo.createTable();
  });

  it('a policy that fits alone but not over the defaults is that cluster’s entry refused, naming the field and the numbers', async () => {
    await putCluster(dynamo.client(), tableName, { clusterId: 'snap', endpoints: ['https://10.0.0.1:2379'], policy: { snapshotBeforeRemove: true } });
    // Without the snapshot (on by default), the same defaults fit.
    await putCluster(dynamo.client(), tableName, { clusterId: 'lab', endpoints: ['http://127.0.0.1:2379'], policy: { snapshotBeforeRemove: false } });
    const directory = createDynamoDirectory({ client: dynamo.client(), tableName, secrets: noSecrets, policyDefaults: { actuatorTimeoutMs: 500_000 } });
    await expect(directory.get('snap')).rejects.toThrow(
      /^cluster snap: policy\.actuatorTimeoutMs: remediate needs 894 s at 9 members \(.*snapshotTimeoutMs 120 s.*actuatorTimeoutMs 500 s.*\), but its Lambda timeout is 900 s less a 60 s margin/,
    );
    expect((await directory.get('lab')).policy.actuatorTimeoutMs).toBe(500_000);
  });

  it('an entry edited by hand past the rule is refused on read', async () => {
    const doc = DynamoDBDocumentClient.from(dynamo.client());
    const policy = { callTimeoutMs: 10_000 };
    await doc.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...clusterConfigKey('prod'), type: 'cluster', clusterId: 'prod', endpoints: ['https://10.0.0.1:2379'], policy },
      }),
    );
    const directory = createDynamoDirectory({ client: dynamo.client(), tableName, secrets: noSecrets });
    await expect(directory.get('prod')).rejects.toThrow(/^cluster prod: policy\.callTimeoutMs: move-leader needs 690 s at 9 members/);
  });
});
