// What every function that reads clusters' entries needs, on AWS: the core (core-deps.ts) and the
// directory, each entry under POLICY_DEFAULTS, its secrets read through a Secrets Manager client
// loaded on the first secret read (lazy-secrets.ts).
import { createDynamoDirectory } from '../adapters/aws/dynamodb-directory.ts';
import type { ClusterDirectory, MemberLookup } from '../ports/cluster-directory.ts';
import { coreDepsFromEnv, type CoreDeps } from './core-deps.ts';
import type { Env } from './env.ts';
import { lazySecretsSource } from './lazy-secrets.ts';

export type BaseDeps = Pick<CoreDeps, 'store' | 'bus' | 'clock' | 'log'> & { directory: ClusterDirectory & MemberLookup };

export function baseDepsFromEnv(env: Env, functionName: string): BaseDeps {
  const { store, bus, clock, log, dynamo, tableName, policyDefaults } = coreDepsFromEnv(env, functionName);
  const directory = createDynamoDirectory({ client: dynamo, tableName, secrets: lazySecretsSource(env), ...(policyDefaults ? { policyDefaults } : {}) });
  return { store, bus, directory, clock, log };
}
