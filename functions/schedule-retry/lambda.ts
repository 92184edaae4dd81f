// The Lambda entry of schedule-retry: its handler over the AWS adapters, and the minute sweep;
// no etcd or Kubernetes client (no-cluster-deps.ts).
import type { Context } from 'aws-lambda';
import type { Deps } from '../app/common/index.ts';
import { noClusterDepsFromEnv } from '../aws-wiring/no-cluster-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createScheduleRetryHandler } from './handler.ts';
import { isScheduledSweep, sweepHandler } from './sweep-handler.ts';

let deps: Deps | undefined;
const depsOnce = (): Deps => (deps ??= noClusterDepsFromEnv(process.env, 'schedule-retry'));
const retries = lambdaEntry(depsOnce, createScheduleRetryHandler);

export const handler = (event: unknown, context: Context): Promise<unknown> => (isScheduledSweep(event) ? sweepHandler(depsOnce()) : retries(event, context));
