// The Lambda entry of schedule-retry: its handler over the AWS adapters, and the minute sweep; no
// cluster access, so its bundle carries no etcd or Kubernetes client (step-deps.ts).
import type { Context } from 'aws-lambda';
import { lambdaEntry, once } from '../aws-wiring/lambda-entry.ts';
import { stepDepsFromEnv } from '../aws-wiring/step-deps.ts';
import { createScheduleRetryHandler } from './handler.ts';
import { isScheduledSweep, sweepHandler } from './sweep-handler.ts';

const deps = once(() => stepDepsFromEnv(process.env, 'schedule-retry'));
const retries = lambdaEntry(deps, createScheduleRetryHandler);

export const handler = (event: unknown, context: Context): Promise<unknown> => (isScheduledSweep(event) ? sweepHandler(deps()) : retries(event, context));
