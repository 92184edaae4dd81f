// The Lambda entry of schedule-retry: its handler over the AWS adapters.
import { awsDepsFromEnv } from '../aws/deps.ts';
import { lambdaEntry } from '../aws/lambda-entry.ts';
import { createScheduleRetryHandler } from './handler.ts';

export const handler = lambdaEntry(() => awsDepsFromEnv(process.env, 'schedule-retry'), createScheduleRetryHandler);
