// Replaces a removed etcd member's machine the Cluster API way: record why on the Machine, then
// delete it. KCP's pre-terminate hook then finds the member already gone and lets the deletion
// through, and KCP scales a replacement up.
import { ApiException, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Actuator, ReplaceRequest, ReplaceResult } from '../../../ports/actuator.ts';
import type { KubeAccessConfig } from '../../../ports/kube-access.ts';
import { kubeConfigFrom } from '../kube-config.ts';
import { describeKubeError, isNotFound } from '../api-errors.ts';
import {
  CAPI_GROUP,
  CONTROL_PLANE_LABEL,
  MACHINES_PLURAL,
  createMachineReader,
  resolveMachineApi,
  type MachineApiSource,
  type MachineApiVersion,
  type MachineRef,
} from './machines.ts';
import { machineApiOf } from './machine-api-version.ts';
import { withSignal } from '../signal.ts';
import { writeMachineCondition } from './machine-remediated.ts';

export const REMEDIATED_ANNOTATION = 'etcd-remediator.io/remediated';
/**
 * Cluster API's ExcludeNodeDrainingAnnotation: the Machine controller skips drain. Drain waits for
 * the Node's pods to stop, and a Node that is not Ready cannot stop them: with its container runtime
 * down the kubelet still posts (Ready False, not Unknown), so the Machine controller's relaxed drain
 * for an unreachable Node does not apply and, without nodeDrainTimeout, deletion waits for ever.
 */
export const EXCLUDE_NODE_DRAINING = 'machine.cluster.x-k8s.io/exclude-node-draining';

/** Why drain cannot finish on this Machine's Node, or undefined when its Node is Ready (or unknown to Cluster API). */
export function drainCannotFinish(machine: Pick<MachineRef, 'nodeReady' | 'nodeName'>): string | undefined {
  const ready = machine.nodeReady;
  if (!ready || ready.status === 'True') return undefined;
  const said = ready.message?.replace(/^\* /, '') ?? `NodeReady ${ready.status}`;
  const node = machine.nodeName === undefined ? 'its Node' : `its Node ${machine.nodeName}`;
  return `${node} is not Ready (${ready.reason ?? ready.status}: ${said}), so its pods cannot stop and a drain would wait for ever`;
}

/** The annotation's value, as JSON. */
export interface RemediationRecord {
  incidentId: string;
  at: string;
  reason: string;
  member: string;
}

export interface MachineActuatorOptions {
  customObjects: CustomObjectsApi;
  namespace: string;
  clusterName: string;
  version?: MachineApiSource;
  now?: () => Date;
}

export class MachineActuatorError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MachineActuatorError';
  }
}

function memberLabel({ member }: ReplaceRequest): string {
  return member.name || member.id;
}

/**
 * The Machine read is gone and another has its name: a DELETE's uid precondition failed (409,
 * rest/delete.go BeforeDelete), or a patch carrying the old uid met the new one (422 "metadata.uid:
 * ... field is immutable", rest/update.go BeforeUpdate's common field validation).
 */
function uidRefused(error: unknown): boolean {
  if (!(error instanceof ApiException)) return false;
  if (error.code === 409) return true;
  return error.code === 422 && describeKubeError(error).includes('metadata.uid');
}

export function createMachineActuator(options: MachineActuatorOptions): Actuator {
  const { customObjects, namespace, clusterName, version = 'v1beta1', now = () => new Date() } = options;
  const machines = createMachineReader({ customObjects, clusterName, version });
  const coordinates = (served: MachineApiVersion, name: string) => ({ group: CAPI_GROUP, version: served, plural: MACHINES_PLURAL, namespace, name });
  const where = (name: string) => `Machine ${name} in namespace ${namespace}`;

  // A machineName target names the Machine; otherwise kubeadm named the member after its node.
  async function find(request: ReplaceRequest): Promise<{ machine: MachineRef | undefined; asked: string }> {
    const call = { ...(request.signal ? { signal: request.signal } : {}) };
    const machineName = request.target.machineName;
    if (machineName) return { machine: await machines.machineByName(namespace, machineName, call), asked: where(machineName) };
    const nodeName = request.target.nodeName ?? memberLabel(request);
    const machine = await machines.machineOfNode(namespace, nodeName, call);
    return { machine, asked: `the control-plane Machine of node ${nodeName} (cluster ${clusterName}, namespace ${namespace})` };
  }

  /** Only a control-plane Machine runs an etcd member: a worker named by mistake is never deleted. */
  function refuseWorker(machine: MachineRef): void {
    if (machine.controlPlane) return;
    throw new MachineActuatorError(
      `${where(machine.name)} is not a control-plane Machine (it has no ${CONTROL_PLANE_LABEL} label), so it runs no etcd member of cluster ${clusterName}; it is not deleted`,
    );
  }

  /** false when the Machine went in the meantime. */
  async function step(what: string, name: string, call: () => Promise<unknown>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (error) {
      if (isNotFound(error) || uidRefused(error)) return false;
      throw new MachineActuatorError(`${what} ${where(name)} failed: ${describeKubeError(error)}`, { cause: error });
    }
  }

  return {
    name: 'capi-machine',
    async replace(request: ReplaceRequest): Promise<ReplaceResult> {
      const { signal } = request;
      signal?.throwIfAborted();
      const { machine, asked } = await find(request);
      const served = await resolveMachineApi(version);
      if (!machine) return { action: 'deleted', detail: `${asked} is already gone` };
      const label = where(machine.name);
      const seen = request.machine;
      // Another uid is a Machine made since the incident looked: its own is gone, so it is replaced.
      if (seen && seen.uid !== machine.uid) {
        return {
          action: 'deleted',
          detail: `${label} is uid ${machine.uid}, not ${seen.name} uid ${seen.uid} that the incident saw: that Machine is already gone, and this one is left alone`,
        };
      }
      refuseWorker(machine);
      // Deleting already: ours on a redelivery, or CAPI's own; either way the replacement is coming.
      if (machine.deleting) return { action: 'deleted', detail: `${label} is already being deleted` };
      const record: RemediationRecord = {
        incidentId: request.incidentId,
        at: now().toISOString(),
        reason: `etcd member ${memberLabel(request)} was removed by incident ${request.incidentId}`,
        member: memberLabel(request),
      };
      // The uid makes the patch refused (metadata.uid is immutable) by a Machine that took the name since the read.
      const noDrain = drainCannotFinish(machine);
      const annotations = { [REMEDIATED_ANNOTATION]: JSON.stringify(record), ...(noDrain ? { [EXCLUDE_NODE_DRAINING]: noDrain.slice(0, 250) } : {}) };
      const body = { metadata: { uid: machine.uid, annotations } };
      signal?.throwIfAborted();
      const annotated = await step('annotating', machine.name, () =>
        customObjects.patchNamespacedCustomObject(
          { ...coordinates(served, machine.name), body },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch, withSignal(signal)),
        ),
      );
      if (!annotated) return { action: 'deleted', detail: `${label} went before it was annotated` };
      signal?.throwIfAborted();
      // Said on the Machine before it goes: once deleting, a later status of the request no longer reaches it.
      // Not a reason to keep the Machine: a failure is said in the result.
      const untold = await writeMachineCondition(
        customObjects,
        served,
        { namespace, name: machine.name },
        {
          type: 'ExternallyRemediated',
          status: 'True',
          reason: 'EtcdMemberRemoved',
          message: `${record.reason}; the Machine is deleted for its replacement${noDrain ? ` (drain skipped: ${noDrain})` : ''}`,
          lastTransitionTime: record.at.replace(/\.\d{3}Z$/, 'Z'),
        },
      ).then(
        () => '',
        (error: unknown) => `; its ExternallyRemediated condition was not written (${error instanceof Error ? error.message : String(error)})`,
      );
      // Only the Machine that was read: a replacement given the same name is never deleted.
      const deleted = await step('deleting', machine.name, () =>
        customObjects.deleteNamespacedCustomObject({ ...coordinates(served, machine.name), body: { preconditions: { uid: machine.uid } } }, withSignal(signal)),
      );
      if (!deleted) return { action: 'deleted', detail: `${label} was annotated ${REMEDIATED_ANNOTATION} and went before it was deleted` };
      const skipped = noDrain ? `, drain skipped (${EXCLUDE_NODE_DRAINING}): ${noDrain}` : '';
      return { action: 'deleted', detail: `${label} annotated ${REMEDIATED_ANNOTATION} (incident ${request.incidentId}) and deleted${skipped}${untold}` };
    },
  };
}

/** The Machine actuator for a cluster's Cluster API access, as a directory entry gives it. */
export function machineActuatorFor(management: NonNullable<KubeAccessConfig['management']>): Actuator {
  const config = kubeConfigFrom(management.kubeconfig);
  return createMachineActuator({
    customObjects: config.makeApiClient(CustomObjectsApi),
    namespace: management.namespace,
    clusterName: management.clusterName,
    version: machineApiOf(management, config),
  });
}
