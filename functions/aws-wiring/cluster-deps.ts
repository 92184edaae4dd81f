// What a step that talks to a cluster gets on AWS (probe-members, move-leader, remediate): a step's
// deps (step-deps.ts) and the cluster access. The Kubernetes client is loaded only when the
// directory first returns a cluster with kube access (kube-on-demand.ts), the etcd client only when
// it first returns a cluster (etcd-on-demand.ts); remediate adds its snapshots (lazy-snapshots.ts).
import { etcdOnlyActuator } from '../adapters/etcd/etcd-only-actuator.ts';
import type { ClusterDeps } from '../app/common/index.ts';
import type { Env } from './env.ts';
import { etcdOnDemand } from './etcd-on-demand.ts';
import { kubeOnDemand } from '../adapters/kube/kube-on-demand.ts';
import { stepDepsFromEnv, type StepDeps } from './step-deps.ts';

export function clusterDepsFromEnv(env: Env, functionName: string): ClusterDeps & StepDeps {
  const steps = stepDepsFromEnv(env, functionName);
  const kube = kubeOnDemand(steps.directory);
  // The same etcd3 access as the local runtime: one client per cluster, member and path, kept
  // warm for the container's life.
  const etcd = etcdOnDemand(kube.directory, kube.kubeEtcd, steps.clock);
  return { ...steps, directory: etcd.directory, etcdFor: etcd.etcdFor, actuator: kube.actuator(etcdOnlyActuator) };
}
