// The AWS edge of probe-members, move-leader and remediate: the adapters a Lambda
// container uses, chosen from its environment, once. The Kubernetes client is loaded only when a
// cluster with kube access is first read (kube-on-demand.ts).
import type { Deps } from '../app/deps.ts';
import { etcdOnlyActuator } from '../adapters/etcd/etcd-only-actuator.ts';
import { createPerClusterEtcd } from '../adapters/etcd/per-cluster-access.ts';
import type { ClusterDirectory, MemberLookup } from '../ports/cluster-directory.ts';
import type { Env } from './env.ts';
import { kubeOnDemand } from './kube-on-demand.ts';
import { schedulingDepsFromEnv } from './scheduling-deps.ts';

export type AwsDeps = Deps & { directory: ClusterDirectory & MemberLookup };

export function awsDepsFromEnv(env: Env = process.env, functionName = 'etcd-remediator'): AwsDeps {
  const base = schedulingDepsFromEnv(env, functionName);
  const kube = kubeOnDemand(base.directory);
  // The same etcd3 access as the local runtime: one client per cluster, member and path, kept
  // warm for the container's life. No snapshot store on AWS yet: a policy asking for one retries
  // with SNAPSHOT_FAILED, saying so.
  const etcd = createPerClusterEtcd(kube.kubeEtcd, base.clock);
  return { ...base, directory: kube.directory, etcdFor: etcd.etcdFor, actuator: kube.actuator(etcdOnlyActuator), random: Math.random };
}
