// The AWS edge of the intake: it reads the directory, writes dead letters and publishes.
import type { IntakeDeps } from '../app/intake.ts';
import { baseDepsFromEnv } from './base-deps.ts';
import type { Env } from './env.ts';

export const awsIntakeDepsFromEnv = (env: Env = process.env, functionName = 'intake'): IntakeDeps => baseDepsFromEnv(env, functionName);
