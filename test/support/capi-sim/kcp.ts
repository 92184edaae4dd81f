// KubeadmControlPlane, as far as it meets an etcd remediation (controlplane/kubeadm/reconcilers/
// kubeadmcontrolplane at ae7ff047), one round, in its reconcile order:
// - its pre-terminate hook on each of its Machines (reconcilePreTerminateHook): once a deleting
//   Machine waits on pre-terminate hooks and KCP's is the last, forward etcd leadership off it if it
//   leads (ForwardEtcdLeadership dials the LEADER's own node: kubeadmcontrolplane_controller.go
//   forwardEtcdLeadership, "Move etcd member has to be called on the current etcd leader"), remove
//   its member through another node, then drop the hook;
// - its own remediation (remediation.go reconcileUnhealthyMachines) of a Machine an MHC without a
//   template marked (HealthCheckSucceeded False, OwnerRemediated False): one at a time, none while a
//   Machine is deleting, the etcd quorum check (targetEtcdClusterHealthy), then forward leadership,
//   and CannotBeRemediated with the error when it cannot; else delete the Machine and annotate
//   remediation-in-progress;
// - scale up (scale.go, preflight.go) to its replicas: never while a Machine is deleting; the strict
//   preflight (every remaining Machine's API server, controller manager, scheduler and etcd pod and
//   etcd member healthy) unless its own remediation is in progress, when only etcd is checked.
import { isObject, type JsonObject } from '../fakes/kube/patch.ts';
import { metadataOf, resourceType } from '../fakes/kube/store.ts';
import {
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  KCP_CLEANUP_HOOK,
  MACHINE_FINALIZER,
  MACHINES,
  NODES,
  PRE_TERMINATE_HOOK_PREFIX,
  REMEDIATION_IN_PROGRESS,
  annotationsOf,
  conditionOf,
  isDeleting,
  nameOf,
  nodeCondition,
  nodeRefOf,
  rfc3339,
  withCondition,
} from './capi-objects.ts';
import type { EtcdMemberView, EtcdThroughNodes } from './etcd-through-node.ts';
import type { SimContext } from './sim-context.ts';

const KCPS = resourceType('controlplane.cluster.x-k8s.io', 'kubeadmcontrolplanes')!;

export interface KcpOptions {
  namespace: string;
  /** The KubeadmControlPlane object the simulation keeps its conditions on. */
  name: string;
  clusterName: string;
  replicas: number;
  etcd: EtcdThroughNodes;
  /** Provisions a replacement control-plane Machine: its etcd member joined, its Node and Machine created. */
  provision(): Promise<{ machine: string }>;
  /** Machines whose controller manager (say) is not healthy: the strict preflight holds on them. */
  sickComponents?: ReadonlySet<string>;
}

export interface KcpState {
  /** KCP's own annotation while its remediation is in progress. */
  annotations: Record<string, string>;
  provisioning?: Promise<void>;
  /** Why the last round did not scale up, as KCP's conditions would say. */
  holding?: string;
}

const readyNode = (sim: SimContext, node: string | undefined): boolean => {
  const found = node === undefined ? undefined : sim.fake.store.find(NODES, '', node);
  return found !== undefined && nodeCondition(found, 'Ready')?.status === 'True';
};

export async function kcpRound(sim: SimContext, options: KcpOptions, state: KcpState): Promise<void> {
  const selector = `${CLUSTER_NAME_LABEL}=${options.clusterName},${CONTROL_PLANE_LABEL}`;
  const machines = () => sim.fake.store.list(MACHINES, options.namespace, selector);
  // Every control-plane Machine carries KCP's hook and the Machine finalizer from its creation.
  for (const machine of machines()) {
    if (isDeleting(machine)) continue;
    const metadata = metadataOf(machine);
    const finalizers = Array.isArray(metadata.finalizers) ? metadata.finalizers : [];
    if (annotationsOf(machine)[KCP_CLEANUP_HOOK] !== undefined && finalizers.includes(MACHINE_FINALIZER)) continue;
    sim.fake.store.put(MACHINES, {
      ...machine,
      metadata: {
        ...metadata,
        annotations: { ...annotationsOf(machine), [KCP_CLEANUP_HOOK]: '' },
        finalizers: [...new Set([...finalizers, MACHINE_FINALIZER])],
      },
    });
  }
  const nodesFirst = machines()
    .sort((a, b) => Number(isDeleting(a)) - Number(isDeleting(b)))
    .map(nodeRefOf)
    .filter((n): n is string => n !== undefined);
  const etcd = await options.etcd.read(nodesFirst).catch((error: unknown) => {
    sim.said('kcp', `etcd not read: ${(error as Error).message}`);
    return undefined;
  });
  if (!etcd) return;

  for (const machine of machines()) await preTerminateHook(sim, options, machine, etcd);
  if (await remediate(sim, options, state, machines(), etcd)) return;
  scaleUp(sim, options, state, machines(), etcd.members);
}

async function forwardLeadership(
  sim: SimContext,
  options: KcpOptions,
  machine: JsonObject,
  etcd: { members: EtcdMemberView[]; leaderName: string | undefined },
  all: JsonObject[],
): Promise<void> {
  if (etcd.leaderName === undefined) throw new Error('unable to move etcd leadership, failed to detect etcd leader');
  const node = nodeRefOf(machine);
  if (node !== etcd.leaderName) return;
  const candidates = all.filter((m) => m !== machine && !isDeleting(m) && nodeRefOf(m) !== undefined);
  for (const candidate of candidates) {
    const member = etcd.members.find((m) => m.name === nodeRefOf(candidate));
    if (!member) continue;
    try {
      await options.etcd.moveLeader(etcd.leaderName, member.id);
      sim.said(nameOf(machine), `kcp moved etcd leadership to ${nodeRefOf(candidate)}`);
      return;
    } catch (error) {
      sim.said('kcp', `forward leadership to ${nodeRefOf(candidate)} failed: ${(error as Error).message}`);
    }
  }
  throw new Error('failed to move etcd leadership');
}

async function preTerminateHook(
  sim: SimContext,
  options: KcpOptions,
  machine: JsonObject,
  etcd: { members: EtcdMemberView[]; leaderName: string | undefined },
): Promise<void> {
  if (!isDeleting(machine) || annotationsOf(machine)[KCP_CLEANUP_HOOK] === undefined) return;
  const deletion = (machine.status as { deletion?: { waitForPreTerminateHookStartTime?: string } } | undefined)?.deletion;
  if (deletion?.waitForPreTerminateHookStartTime === undefined) return;
  // KCP's hook runs last: other pre-terminate hooks first.
  if (Object.keys(annotationsOf(machine)).some((k) => k.startsWith(PRE_TERMINATE_HOOK_PREFIX) && k !== KCP_CLEANUP_HOOK)) return;
  const all = sim.fake.store.list(MACHINES, options.namespace, `${CLUSTER_NAME_LABEL}=${options.clusterName},${CONTROL_PLANE_LABEL}`);
  try {
    await forwardLeadership(sim, options, machine, etcd, all);
    const member = etcd.members.find((m) => m.name === nodeRefOf(machine));
    if (member) {
      const via = all
        .filter((m) => m !== machine && !isDeleting(m))
        .map(nodeRefOf)
        .filter((n): n is string => n !== undefined);
      await options.etcd.removeMember(member.id, via);
      sim.said(nameOf(machine), `kcp removed etcd member ${member.name}`);
    }
  } catch (error) {
    sim.said(nameOf(machine), `kcp pre-terminate hook blocked: ${(error as Error).message}`);
    return;
  }
  const current = sim.fake.store.find(MACHINES, options.namespace, nameOf(machine));
  if (!current) return;
  const { [KCP_CLEANUP_HOOK]: _hook, ...annotations } = annotationsOf(current);
  sim.fake.store.put(MACHINES, { ...current, metadata: { ...metadataOf(current), annotations } });
  sim.said(nameOf(machine), 'kcp pre-terminate hook done');
}

/** True when the round stops here (a remediation started, deferred or refused). */
async function remediate(
  sim: SimContext,
  options: KcpOptions,
  state: KcpState,
  machines: JsonObject[],
  etcd: { members: EtcdMemberView[]; leaderName: string | undefined },
): Promise<boolean> {
  const candidates = machines.filter(
    (m) => conditionOf(m, 'HealthCheckSucceeded')?.status === 'False' && conditionOf(m, 'OwnerRemediated')?.status === 'False',
  );
  if (candidates.length === 0) {
    delete state.annotations[REMEDIATION_IN_PROGRESS];
    return false;
  }
  if (state.annotations[REMEDIATION_IN_PROGRESS] !== undefined) return false;
  const target = candidates.find((m) => !isDeleting(m));
  if (!target) return false;
  const refuse = (reason: string, message: string): true => {
    sim.fake.store.put(MACHINES, withCondition(target, { type: 'OwnerRemediated', status: 'False', reason, severity: 'Warning', message }, sim.now()));
    sim.said(nameOf(target), `kcp ${reason}: ${message}`);
    return true;
  };
  if (machines.some(isDeleting))
    return refuse('RemediationDeferred', 'KubeadmControlPlane waiting for control plane Machine deletion to complete before triggering remediation');
  // targetEtcdClusterHealthy: the members left after this one, less the unhealthy ones, keep quorum.
  const remaining = etcd.members.filter((m) => m.name !== nodeRefOf(target) && !m.isLearner);
  const unhealthy = remaining.filter((m) => !readyNode(sim, m.name));
  if (etcd.members.some((m) => m.isLearner) || remaining.length - unhealthy.length < Math.floor(remaining.length / 2) + 1)
    return refuse('CannotBeRemediated', "KubeadmControlPlane can't remediate this machine because this could result in etcd loosing quorum");
  try {
    await forwardLeadership(sim, options, target, etcd, machines);
  } catch (error) {
    return refuse('CannotBeRemediated', (error as Error).message);
  }
  sim.fake.store.put(MACHINES, { ...target, metadata: { ...metadataOf(target), deletionTimestamp: rfc3339(sim.now()) } });
  state.annotations[REMEDIATION_IN_PROGRESS] = JSON.stringify({ machine: nameOf(target), timestamp: rfc3339(sim.now()), retryCount: 0 });
  sim.said(nameOf(target), 'kcp deleted the Machine to remediate it');
  return true;
}

/**
 * KCP's ScalingUp condition (status.go setScalingUpCondition): False NotScalingUp at full size;
 * True "Scaling up from N to M replicas", with " is blocked because:" and one line per failed
 * preflight check (getPreflightMessages' words) when they hold it. On the v1beta1 object it sits
 * under status.v1beta2.conditions.
 */
function setScalingUp(sim: SimContext, options: KcpOptions, standing: number, blockedBy: readonly string[]): void {
  const kcp = sim.fake.store.find(KCPS, options.namespace, options.name);
  if (!kcp) return;
  const condition: JsonObject =
    standing >= options.replicas
      ? { type: 'ScalingUp', status: 'False', reason: 'NotScalingUp' }
      : {
          type: 'ScalingUp',
          status: 'True',
          reason: 'ScalingUp',
          message: `Scaling up from ${standing} to ${options.replicas} replicas${blockedBy.length > 0 ? ` is blocked because:\n${blockedBy.map((m) => `* ${m}`).join('\n')}` : ''}`,
        };
  const status = isObject(kcp.status) ? kcp.status : {};
  const v1beta2 = isObject(status.v1beta2) ? status.v1beta2 : {};
  const others = (Array.isArray(v1beta2.conditions) ? v1beta2.conditions : []).filter(isObject).filter((c) => c.type !== 'ScalingUp');
  const before = (Array.isArray(v1beta2.conditions) ? v1beta2.conditions : []).filter(isObject).find((c) => c.type === 'ScalingUp');
  if (before && before.status === condition.status && before.message === condition.message) return;
  const kept = before !== undefined && before.status === condition.status ? before.lastTransitionTime : undefined;
  const stamped: JsonObject = { ...condition, lastTransitionTime: kept ?? rfc3339(sim.now()) };
  sim.fake.store.put(KCPS, { ...kcp, status: { ...status, replicas: standing, v1beta2: { ...v1beta2, conditions: [...others, stamped] } } });
}

function scaleUp(sim: SimContext, options: KcpOptions, state: KcpState, machines: JsonObject[], members: EtcdMemberView[]): void {
  if (state.provisioning) return;
  const standing = machines.filter((m) => !isDeleting(m));
  if (standing.length >= options.replicas) {
    delete state.holding;
    setScalingUp(sim, options, standing.length, []);
    return;
  }
  const hold = (why: string, preflight: string): void => {
    state.holding = why;
    sim.said('kcp', `scale up held: ${why}`);
    setScalingUp(sim, options, standing.length, [preflight]);
  };
  if (machines.some(isDeleting))
    return hold(
      `waiting for Machine ${machines.filter(isDeleting).map(nameOf).join(', ')} to be deleted`,
      'waiting for a control plane Machine to complete deletion',
    );
  const relaxed = state.annotations[REMEDIATION_IN_PROGRESS] !== undefined;
  const sick = standing.flatMap((m) => {
    const node = nodeRefOf(m);
    const member = members.find((e) => e.name === node);
    const etcdHealthy = member !== undefined && !member.isLearner && readyNode(sim, node);
    if (!etcdHealthy) return [`${nameOf(m)} (EtcdMemberHealthy)`];
    if (!relaxed && (!readyNode(sim, node) || options.sickComponents?.has(nameOf(m)))) return [`${nameOf(m)} (ControllerManagerPodHealthy)`];
    return [];
  });
  if (sick.length > 0)
    return hold(
      `preflight checks failed: ${sick.join(', ')} not healthy`,
      sick.some((s) => s.includes('EtcdMemberHealthy'))
        ? 'waiting for etcd cluster to become healthy'
        : 'waiting for control plane components to become healthy',
    );
  delete state.holding;
  setScalingUp(sim, options, standing.length, []);
  sim.said('kcp', `scaling up: ${standing.length} of ${options.replicas}`);
  state.provisioning = options
    .provision()
    .then(({ machine }) => sim.said(machine, 'replacement joined'))
    .catch((error: unknown) => sim.said('kcp', `scale up failed: ${(error as Error).message}`))
    .finally(() => {
      delete state.provisioning;
    });
}
