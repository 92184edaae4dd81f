// The Lambda entry of move-leader: its handler over the AWS adapters, cluster access included.
import { clusterDepsFromEnv } from '../aws-wiring/cluster-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createMoveLeaderHandler } from './handler.ts';

export const handler = lambdaEntry(() => clusterDepsFromEnv(process.env, 'move-leader'), createMoveLeaderHandler);
