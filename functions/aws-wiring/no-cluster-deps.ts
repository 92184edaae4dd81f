// The AWS edge of schedule-retry: it schedules retries and sweeps stalled incidents, and never
// talks to a cluster, so its bundle carries no etcd or Kubernetes client. Its deps say so if asked.
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
