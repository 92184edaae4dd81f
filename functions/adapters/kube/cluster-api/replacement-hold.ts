// Why a replacement does not come, in Cluster API's words: the Cluster's control plane (its
// spec.controlPlaneRef, a KubeadmControlPlane) scales up after a Machine we deleted, unless it is
// paused or its preflight checks hold it. KCP says so in its ScalingUp condition (v1beta2;
// status.v1beta2.conditions when read as v1beta1): True, "Scaling up from 2 to 3 replicas is
// blocked because:" then one "* …" line per check (reconcilers/kubeadmcontrolplane/status.go
// setScalingUpCondition, getPreflightMessages). Needs get on clusters and kubeadmcontrolplanes.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { MachineApiVersion } from '../../../ports/kube-access.ts';
import { describeKubeError, isNotFound } from '../api-errors.ts';
import { PAUSED_ANNOTATION as PAUSED } from './cluster-paused.ts';
import { CAPI_GROUP, fieldsOf as fields } from './machines.ts';

export const KCP_GROUP = 'controlplane.cluster.x-k8s.io';

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** What holds the scale-up, from the KubeadmControlPlane object as read; undefined when nothing does. Pure. */
export function replacementHoldOf(kcp: unknown, name: string): string | undefined {
  const object = fields(kcp);
  if (fields(fields(object.metadata).annotations)[PAUSED] !== undefined)
    return `KubeadmControlPlane ${name} is paused (${PAUSED}): it scales nothing up until that annotation goes`;
  const status = fields(object.status);
  const lists = [status.conditions, fields(status.v1beta2).conditions].flatMap((list) => (Array.isArray(list) ? (list as unknown[]) : []));
  const scalingUp = lists.map(fields).find((c) => c.type === 'ScalingUp' && c.status === 'True');
  const message = text(scalingUp?.message);
  if (!message?.includes('is blocked because')) return undefined;
  const said = message.replace(/:\s*\n\s*\*\s*/, ': ').replace(/\s*\n\s*\*\s*/g, '; ');
  return `KubeadmControlPlane ${name} says: ${said}`;
}

/** Reads the Cluster's control plane and says what holds its scale-up; undefined when nothing does, or it is not a KubeadmControlPlane. */
export async function replacementHold(
  customObjects: CustomObjectsApi,
  version: MachineApiVersion,
  cluster: { namespace: string; name: string },
): Promise<string | undefined> {
  const read = async (what: string, call: () => Promise<unknown>): Promise<unknown> => {
    try {
      return await call();
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw new Error(`reading ${what} failed: ${describeKubeError(error)}`, { cause: error });
    }
  };
  const object = await read(`Cluster ${cluster.namespace}/${cluster.name}`, () =>
    customObjects.getNamespacedCustomObject({ group: CAPI_GROUP, version, plural: 'clusters', namespace: cluster.namespace, name: cluster.name }),
  );
  const ref = fields(fields(fields(object).spec).controlPlaneRef);
  const name = text(ref.name);
  if (ref.kind !== 'KubeadmControlPlane' || name === undefined) return undefined;
  const namespace = text(ref.namespace) ?? cluster.namespace;
  const kcp = await read(`KubeadmControlPlane ${namespace}/${name}`, () =>
    customObjects.getNamespacedCustomObject({ group: KCP_GROUP, version, plural: 'kubeadmcontrolplanes', namespace, name }),
  );
  return kcp === undefined ? undefined : replacementHoldOf(kcp, `${namespace}/${name}`);
}
