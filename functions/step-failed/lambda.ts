// The Lambda entry of step-failed: its handler over the AWS adapters.
import { awsDepsFromEnv } from '../aws-wiring/pipeline-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createStepFailedHandler } from './handler.ts';

export const handler = lambdaEntry(() => awsDepsFromEnv(process.env, 'step-failed'), createStepFailedHandler);
