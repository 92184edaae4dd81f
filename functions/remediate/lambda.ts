// The Lambda entry of remediate: its handler over the AWS adapters.
import { awsDepsFromEnv } from '../aws-wiring/pipeline-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createRemediateHandler } from './handler.ts';

export const handler = lambdaEntry(() => awsDepsFromEnv(process.env, 'remediate'), createRemediateHandler);
