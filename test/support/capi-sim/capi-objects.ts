// Cluster API's names (api/core/v1beta2 constants at kubernetes-sigs/cluster-api ae7ff047) and the
// v1beta1 condition shape the simulation writes on the objects it owns. The simulated controllers
// write through the fake's store, as a controller's writes land in etcd: watches see each change.
import type { KubeApiFake } from '../fakes/kube/api-server.ts';
import type { JsonObject } from '../fakes/kube/patch.ts';
import { isObject, text } from '../fakes/kube/patch.ts';
import { metadataOf, resourceType } from '../fakes/kube/store.ts';

export const MACHINES = resourceType('cluster.x-k8s.io', 'machines')!;
export const CLUSTERS = resourceType('cluster.x-k8s.io', 'clusters')!;
export const MHCS = resourceType('cluster.x-k8s.io', 'machinehealthchecks')!;
export const NODES = resourceType('', 'nodes')!;
export const PODS = resourceType('', 'pods')!;

export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
/** clusterv1.MachineFinalizer: the Machine controller's, removed once deletion completed. */
export const MACHINE_FINALIZER = 'machine.cluster.x-k8s.io';
export const PRE_DRAIN_HOOK_PREFIX = 'pre-drain.delete.hook.machine.cluster.x-k8s.io';
export const PRE_TERMINATE_HOOK_PREFIX = 'pre-terminate.delete.hook.machine.cluster.x-k8s.io';
/** KCP's own pre-terminate hook (controlplane/kubeadm api: KubeadmControlPlanePreTerminateHookCleanupAnnotation). */
export const KCP_CLEANUP_HOOK = `${PRE_TERMINATE_HOOK_PREFIX}/kcp-cleanup`;
export const EXCLUDE_NODE_DRAINING = 'machine.cluster.x-k8s.io/exclude-node-draining';
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';
export const SKIP_REMEDIATION = 'cluster.x-k8s.io/skip-remediation';
/** KCP's annotation while a remediation it started is in progress (controlplane/kubeadm api RemediationInProgressAnnotation). */
export const REMEDIATION_IN_PROGRESS = 'controlplane.cluster.x-k8s.io/remediation-in-progress';
export const CLONED_FROM_NAME = 'cluster.x-k8s.io/cloned-from-name';
export const CLONED_FROM_GROUP_KIND = 'cluster.x-k8s.io/cloned-from-groupkind';
/** Drain skips mirror pods (the kubelet's static pods, etcd among them) and DaemonSet pods. */
export const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  severity?: string;
  lastTransitionTime: string;
}

export const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export const labelsOf = (object: JsonObject): Record<string, string> => {
  const labels = metadataOf(object).labels;
  return isObject(labels) ? Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, text(v)])) : {};
};

export const annotationsOf = (object: JsonObject): Record<string, string> => {
  const annotations = metadataOf(object).annotations;
  return isObject(annotations) ? Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k, text(v)])) : {};
};

export const nameOf = (object: JsonObject): string => text(metadataOf(object).name);
export const namespaceOf = (object: JsonObject): string => text(metadataOf(object).namespace);
export const isDeleting = (object: JsonObject): boolean => metadataOf(object).deletionTimestamp !== undefined;

const statusOf = (object: JsonObject): JsonObject => (isObject(object.status) ? object.status : {});

/** A v1beta1 condition (status.conditions) of the object, or undefined. */
export function conditionOf(object: JsonObject, type: string): Condition | undefined {
  const conditions = statusOf(object).conditions;
  const found = (Array.isArray(conditions) ? conditions : []).filter(isObject).find((c) => c.type === type);
  return found as unknown as Condition | undefined;
}

/**
 * The object with condition `type` set as v1beta1conditions.Set does: the transition time kept
 * when the status did not change; the rest of status.conditions left as they are.
 */
export function withCondition(object: JsonObject, next: Omit<Condition, 'lastTransitionTime'>, now: number): JsonObject {
  const status = statusOf(object);
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter(isObject);
  const before = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = before && before.status === next.status ? text(before.lastTransitionTime) || rfc3339(now) : rfc3339(now);
  const condition = { ...next, lastTransitionTime } as unknown as JsonObject;
  const others = conditions.filter((c) => c.type !== next.type);
  return { ...object, status: { ...status, conditions: [...others, condition] } };
}

export const nodeRefOf = (machine: JsonObject): string | undefined => {
  const ref = statusOf(machine).nodeRef;
  return isObject(ref) && typeof ref.name === 'string' ? ref.name : undefined;
};

/** A Node's condition of `type` (Ready), as the kubelet or the lifecycle controller last wrote it. */
export function nodeCondition(node: JsonObject, type: string): JsonObject | undefined {
  const conditions = statusOf(node).conditions;
  return (Array.isArray(conditions) ? conditions : []).filter(isObject).find((c) => c.type === type);
}

/** noderefutil.IsNodeUnreachable: the Node's Ready condition is Unknown. */
export const isNodeUnreachable = (node: JsonObject): boolean => nodeCondition(node, 'Ready')?.status === 'Unknown';

/**
 * A kubeadm control-plane node's pods as drain sees them: its etcd static pod marked as the mirror
 * pod it is (drain leaves it), and one Deployment pod (CoreDNS, say) that drain must evict.
 */
export function dressKubeadmNode(fake: Pick<KubeApiFake, 'store'>, node: string): void {
  const etcdPod = fake.store.get(PODS, 'kube-system', `etcd-${node}`);
  const metadata = isObject(etcdPod.metadata) ? etcdPod.metadata : {};
  const annotations = isObject(metadata.annotations) ? metadata.annotations : {};
  fake.store.put(PODS, { ...etcdPod, metadata: { ...metadata, annotations: { ...annotations, [MIRROR_ANNOTATION]: 'mirror' } } });
  fake.store.put(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `coredns-${node}`,
      namespace: 'kube-system',
      labels: { 'k8s-app': 'kube-dns' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'coredns-5d78c9869d', uid: 'rs-coredns', controller: true }],
    },
    spec: { nodeName: node, containers: [{ name: 'coredns', image: 'registry.k8s.io/coredns/coredns:v1.11.3' }] },
    status: { phase: 'Running' },
  });
}
