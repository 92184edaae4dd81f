// The Lambda entry of move-leader: its handler over the AWS adapters.
import { awsDepsFromEnv } from '../aws/deps.ts';
import { lambdaEntry } from '../aws/lambda-entry.ts';
import { createMoveLeaderHandler } from './handler.ts';

export const handler = lambdaEntry(() => awsDepsFromEnv(process.env, 'move-leader'), createMoveLeaderHandler);
