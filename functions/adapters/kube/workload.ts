// One look at the workload cluster for the etcd paths: kubeadm's etcd static pods and the Nodes
// they run on, read once per probe. Which pod serves which member, and whether its Node still
// exists, is decided from this snapshot alone, so every path of one probe agrees.
import type { CoreV1Api, V1Node, V1Pod } from '@kubernetes/client-node';
import { describeKubeError } from './api-errors.ts';
import { internalIpsOf } from './node-match.ts';
import { plainMetricsPortOf } from './pod-flags.ts';
import { withSignal } from './signal.ts';

/** kubeadm labels its static etcd pod so, and records the member's client URL on it. */
export const ETCD_POD_SELECTOR = 'component=etcd,tier=control-plane';
export const ADVERTISE_CLIENT_URLS = 'kubeadm.kubernetes.io/etcd.advertise-client-urls';

export interface EtcdPod {
  namespace: string;
  name: string;
  nodeName: string;
  /** From kubeadm's annotation: the member's client URL as the pod advertises it. */
  clientUrl?: string;
  /** hostNetwork: the node's IP. */
  podIp?: string;
  /** Where the pod serves plain-http /metrics, from its --listen-metrics-urls (kubeadm: 2381). */
  metricsPort?: number;
}

export interface WorkloadNode {
  name: string;
  internalIps: string[];
  /** The Ready condition: a kubelet that posts status is alive; undefined when none was posted. */
  ready?: boolean;
  /** spec.unschedulable: cordoned (kubectl cordon; every drain, Cluster API's included, starts with one). */
  cordoned?: boolean;
}

export interface WorkloadSnapshot {
  pods: EtcdPod[];
  nodes: WorkloadNode[];
}

export class WorkloadReadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WorkloadReadError';
  }
}

function toEtcdPod(pod: V1Pod, namespace: string): EtcdPod | undefined {
  const name = pod.metadata?.name;
  const nodeName = pod.spec?.nodeName;
  if (!name || !nodeName) return undefined;
  const clientUrl = pod.metadata?.annotations?.[ADVERTISE_CLIENT_URLS]?.split(',')[0]?.trim();
  const metricsPort = plainMetricsPortOf(pod.spec?.containers);
  return {
    namespace: pod.metadata?.namespace ?? namespace,
    name,
    nodeName,
    ...(clientUrl ? { clientUrl } : {}),
    ...(pod.status?.podIP ? { podIp: pod.status.podIP } : {}),
    ...(metricsPort === undefined ? {} : { metricsPort }),
  };
}

function toWorkloadNode(node: V1Node): WorkloadNode | undefined {
  const name = node.metadata?.name;
  if (!name) return undefined;
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return {
    name,
    internalIps: internalIpsOf(node),
    ...(ready === 'True' || ready === 'False' ? { ready: ready === 'True' } : {}),
    ...(node.spec?.unschedulable === true ? { cordoned: true } : {}),
  };
}

export async function readWorkload(core: CoreV1Api, namespace: string, signal?: AbortSignal): Promise<WorkloadSnapshot> {
  const call = withSignal(signal);
  const [pods, nodes] = await Promise.all([
    core.listNamespacedPod({ namespace, labelSelector: ETCD_POD_SELECTOR }, call).catch((error: unknown) => {
      throw new WorkloadReadError(`listing the etcd pods in ${namespace} failed: ${describeKubeError(error)}`, { cause: error });
    }),
    core.listNode({}, call).catch((error: unknown) => {
      throw new WorkloadReadError(`listing Nodes failed: ${describeKubeError(error)}`, { cause: error });
    }),
  ]);
  return {
    pods: pods.items.flatMap((pod) => toEtcdPod(pod, namespace) ?? []),
    nodes: nodes.items.flatMap((node) => toWorkloadNode(node) ?? []),
  };
}
