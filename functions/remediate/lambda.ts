// The Lambda entry of remediate: its handler over the AWS adapters, cluster access included, and
// the only function given a snapshot store (lazy-snapshots.ts).
import { clusterDepsFromEnv } from '../aws-wiring/cluster-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { snapshotsFromEnv } from '../aws-wiring/lazy-snapshots.ts';
import { createRemediateHandler } from './handler.ts';

export const handler = lambdaEntry(() => ({ ...clusterDepsFromEnv(process.env, 'remediate'), ...snapshotsFromEnv(process.env) }), createRemediateHandler);
