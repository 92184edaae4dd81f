// The Lambda entry of probe-members: its handler over the AWS adapters.
import { awsDepsFromEnv } from '../aws-wiring/pipeline-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createProbeMembersHandler } from './handler.ts';

export const handler = lambdaEntry(() => awsDepsFromEnv(process.env, 'probe-members'), createProbeMembersHandler);
