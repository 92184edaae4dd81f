// The AWS edge of the functions that never talk to a cluster: schedule-retry (it schedules retries
// and sweeps stalled incidents) and step-failed (it carries out an outbox and resumes or blocks an
// incident), so their bundles carry no etcd or Kubernetes client. Their deps say so if asked.
import type { Actuator } from '../ports/actuator.ts';
import type { AwsDeps } from './pipeline-deps.ts';
import type { Env } from './env.ts';
import { schedulingDepsFromEnv } from './scheduling-deps.ts';

export function noClusterDepsFromEnv(env: Env, functionName: string): AwsDeps {
  const refuse = (what: string): never => {
    throw new Error(`${functionName} talks to no cluster, yet was asked for ${what}`);
  };
  const actuator: Actuator = { name: 'none', replace: async () => refuse('the actuator') };
  return { ...schedulingDepsFromEnv(env, functionName), etcdFor: (cluster) => refuse(`the etcd of ${cluster.clusterId}`), actuator, random: Math.random };
}
