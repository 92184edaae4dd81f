// The Lambda entry of step-failed: its handler over the AWS adapters. It carries out an incident's
// outbox and resumes or blocks the incident, and never talks to a cluster: no etcd or Kubernetes
// client (no-cluster-deps.ts).
import { noClusterDepsFromEnv } from '../aws-wiring/no-cluster-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createStepFailedHandler } from './handler.ts';

export const handler = lambdaEntry(() => noClusterDepsFromEnv(process.env, 'step-failed'), createStepFailedHandler);
