// The AWS edge of the intake: it maps machines to members through the directory's lookup items
// (never an entry's secrets), writes dead letters and publishes.
import { createIntakeLookup } from '../adapters/aws/dynamodb-intake-lookup.ts';
import type { IntakeDeps } from '../app/intake.ts';
import { baseDepsFromEnv } from './base-deps.ts';
import { dynamoClient } from './clients.ts';
import { requireEnv, type Env } from './env.ts';

export function awsIntakeDepsFromEnv(env: Env = process.env, functionName = 'intake'): IntakeDeps {
  const { store, bus, clock, log } = baseDepsFromEnv(env, functionName);
  const { TABLE_NAME: tableName } = requireEnv(env, functionName, ['TABLE_NAME']);
  return { store, bus, clock, log, directory: createIntakeLookup({ client: dynamoClient(env), tableName }) };
}
