// The AWS edge of the intake: it maps machines to members through the directory's lookup items
// (never an entry's secrets), writes dead letters and publishes. It builds no directory.
import { createIntakeLookup } from '../adapters/aws/dynamodb-intake-lookup.ts';
import type { IntakeDeps } from '../app/intake/index.ts';
import { coreDepsFromEnv } from './core-deps.ts';
import type { Env } from './env.ts';

export function awsIntakeDepsFromEnv(env: Env = process.env, functionName = 'intake'): IntakeDeps {
  const { store, bus, clock, log, dynamo, tableName } = coreDepsFromEnv(env, functionName);
  return { store, bus, clock, log, directory: createIntakeLookup({ client: dynamo, tableName }) };
}
