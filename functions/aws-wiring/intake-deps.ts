// What the intake gets on AWS: what every function has (shared-deps.ts) and the directory's lookup
// items, mapping machines to members (never an entry's secrets). It builds no directory.
import { createIntakeLookup } from '../adapters/aws/dynamodb-intake-lookup.ts';
import type { IntakeDeps } from '../app/intake/index.ts';
import type { Env } from './env.ts';
import { sharedDepsFromEnv } from './shared-deps.ts';

export function awsIntakeDepsFromEnv(env: Env = process.env, functionName = 'intake'): IntakeDeps {
  const { store, bus, clock, log, dynamo, tableName } = sharedDepsFromEnv(env, functionName);
  return { store, bus, clock, log, directory: createIntakeLookup({ client: dynamo, tableName }) };
}
