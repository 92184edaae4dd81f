// The Lambda entry of intake: its handler over the AWS adapters (no directory, no cluster access).
import { awsIntakeDepsFromEnv } from '../aws-wiring/intake-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createIntakeHandler } from './handler.ts';

export const handler = lambdaEntry(() => awsIntakeDepsFromEnv(process.env, 'intake'), createIntakeHandler);
