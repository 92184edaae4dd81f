// The Lambda entry of schedule-retry: its handler over the AWS adapters, and the minute sweep.
import type { Context } from 'aws-lambda';
import type { Deps } from '../app/deps.ts';
import { awsDepsFromEnv } from '../aws-wiring/pipeline-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createScheduleRetryHandler } from './handler.ts';
import { isScheduledSweep, sweepHandler } from './sweep-handler.ts';

let deps: Deps | undefined;
const depsOnce = (): Deps => (deps ??= awsDepsFromEnv(process.env, 'schedule-retry'));
const retries = lambdaEntry(depsOnce, createScheduleRetryHandler);

export const handler = (event: unknown, context: Context): Promise<unknown> => (isScheduledSweep(event) ? sweepHandler(depsOnce()) : retries(event, context));
