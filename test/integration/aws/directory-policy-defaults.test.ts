// POLICY_DEFAULTS on dynalite: a cluster registered with its own policy is read back with the
// defaults under it, both through the directory's option and through a Lambda's cold start.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDynamoDirectory, putCluster } from '../../../functions/adapters/aws/dynamodb-directory.ts';
import type { SecretSource } from '../../../functions/adapters/aws/secrets.ts';
import { awsIntakeDepsFromEnv } from '../../../functions/aws-wiring/intake-deps.ts';
import { defaultPolicy } from '../../../functions/core/policy.ts';
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
    await putCluster(dynamo.client(), tableName, { clusterId: 'prod', endpoints: ['https://10.0.0.1:2379'], policy: { graceMs: 30_000, backoff: { baseMs: 2_000 } } });
    await putCluster(dynamo.client(), tableName, { clusterId: 'lab', endpoints: ['http://127.0.0.1:2379'] });
  });

  it('the directory option: the cluster’s fields win, the defaults fill the rest, the built-in ones after', async () => {
    const directory = createDynamoDirectory({ client: dynamo.client(), tableName, secrets: noSecrets, policyDefaults: { graceMs: 120_000, dryRun: true, backoff: { capMs: 60_000 } } });
    expect((await directory.get('prod')).policy).toEqual({ ...defaultPolicy, graceMs: 30_000, dryRun: true, backoff: { baseMs: 2_000, capMs: 60_000 } });
    expect((await directory.get('lab')).policy).toEqual({ ...defaultPolicy, graceMs: 120_000, dryRun: true, backoff: { baseMs: 5_000, capMs: 60_000 } });
  });

  it('a cold start reads POLICY_DEFAULTS into the directory it builds', async () => {
    // The SDK takes credentials from process.env, as in Lambda; static ones, so no provider looks further.
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = 'test';
    process.env.AWS_SECRET_ACCESS_KEY = 'test';
    try {
      const deps = awsIntakeDepsFromEnv({
        TABLE_NAME: tableName,
        BUS_NAME: 'remediation',
        AWS_REGION: 'us-east-1',
        AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
        POLICY_DEFAULTS: JSON.stringify({ electionTimeoutMs: 500, allowShrink: true }),
      });
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
