// The AWS edge of probe-members, move-leader and remediate: the adapters a Lambda container uses,
// chosen from its environment, once. The etcd client is loaded only when the directory first
// returns a cluster (etcd-on-demand.ts), the Kubernetes client only when that cluster has kube
// access (kube-on-demand.ts), the S3 client only when remediate takes a snapshot (lazy-snapshots.ts).
import type { Deps } from '../app/common/index.ts';
import { etcdOnlyActuator } from '../adapters/etcd/etcd-only-actuator.ts';
import type { ClusterDirectory, MemberLookup } from '../ports/cluster-directory.ts';
import type { Env } from './env.ts';
import { etcdOnDemand } from './etcd-on-demand.ts';
import { kubeOnDemand } from './kube-on-demand.ts';
import { lazySnapshots } from './lazy-snapshots.ts';
import { schedulingDepsFromEnv } from './scheduling-deps.ts';

export type AwsDeps = Deps & { directory: ClusterDirectory & MemberLookup };

export function awsDepsFromEnv(env: Env = process.env, functionName = 'etcd-remediator'): AwsDeps {
  const base = schedulingDepsFromEnv(env, functionName);
  const kube = kubeOnDemand(base.directory);
  // The same etcd3 access as the local runtime: one client per cluster, member and path, kept
  // warm for the container's life.
  const etcd = etcdOnDemand(kube.directory, kube.kubeEtcd, base.clock);
  // The construct names its bucket to remediate only; without it a snapshot the policy requires
  // blocks with SNAPSHOT_FAILED, saying none is configured.
  const bucket = env.SNAPSHOT_BUCKET?.trim();
  return {
    ...base,
    directory: etcd.directory,
    etcdFor: etcd.etcdFor,
    actuator: kube.actuator(etcdOnlyActuator),
    random: Math.random,
    ...(bucket ? { snapshots: lazySnapshots(env, bucket) } : {}),
  };
}
