// The Lambda entry of move-leader: its handler over the AWS adapters.
import { awsDepsFromEnv } from '../aws-wiring/pipeline-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createMoveLeaderHandler } from './handler.ts';

export const handler = lambdaEntry(() => awsDepsFromEnv(process.env, 'move-leader'), createMoveLeaderHandler);
