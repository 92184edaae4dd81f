// The Lambda entry of step-failed: its handler over the AWS adapters. It carries out an incident's
// outbox and resumes or blocks the incident, and never talks to a cluster: no cluster access, so
// its bundle carries no etcd or Kubernetes client (step-deps.ts).
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { stepDepsFromEnv } from '../aws-wiring/step-deps.ts';
import { createStepFailedHandler } from './handler.ts';

export const handler = lambdaEntry(() => stepDepsFromEnv(process.env, 'step-failed'), createStepFailedHandler);
