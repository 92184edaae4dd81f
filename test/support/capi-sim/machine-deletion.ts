// The Machine controller's deletion (core/reconcilers/machine/machine_controller.go reconcileDelete
// at ae7ff047), one pass per round for each deleting Machine that still holds its finalizer:
// pre-drain hooks; drain (isNodeDrainAllowed: not with machine.cluster.x-k8s.io/exclude-node-draining,
// not once pre-terminate hooks were waited on, not past spec.deletion.nodeDrainTimeoutSeconds; an
// unreachable Node, Ready Unknown, ignores pods deleted over a second ago, drainNode's
// SkipWaitForDeleteTimeoutSeconds=1; a Node gone needs no drain); pre-terminate hooks; the
// infrastructure; the Node; then the finalizer goes and the API server deletes the Machine.
// Drain evicts what kubectl drain would: not mirror pods, not DaemonSet pods.
import type { JsonObject } from '../fakes/kube/patch.ts';
import { isObject, text } from '../fakes/kube/patch.ts';
import { metadataOf } from '../fakes/kube/store.ts';
import {
  CONTROL_PLANE_LABEL,
  EXCLUDE_NODE_DRAINING,
  MACHINE_FINALIZER,
  MACHINES,
  MIRROR_ANNOTATION,
  NODES,
  PODS,
  PRE_DRAIN_HOOK_PREFIX,
  PRE_TERMINATE_HOOK_PREFIX,
  annotationsOf,
  isDeleting,
  isNodeUnreachable,
  labelsOf,
  nameOf,
  namespaceOf,
  nodeRefOf,
  rfc3339,
  withCondition,
} from './capi-objects.ts';
import type { SimContext } from './sim-context.ts';

const deletionOf = (machine: JsonObject): JsonObject => (isObject(machine.status) && isObject(machine.status.deletion) ? machine.status.deletion : {});

function withDeletion(machine: JsonObject, field: string, now: number): JsonObject {
  const deletion = deletionOf(machine);
  if (deletion[field] !== undefined) return machine;
  const status = isObject(machine.status) ? machine.status : {};
  return { ...machine, status: { ...status, deletion: { ...deletion, [field]: rfc3339(now) } } };
}

const drainTimeoutMs = (machine: JsonObject): number | undefined => {
  const spec = isObject(machine.spec) ? machine.spec : {};
  const v1beta2 = isObject(spec.deletion) ? spec.deletion.nodeDrainTimeoutSeconds : undefined;
  if (typeof v1beta2 === 'number' && v1beta2 > 0) return v1beta2 * 1_000;
  const v1beta1 = typeof spec.nodeDrainTimeout === 'string' ? /^(\d+)s$/.exec(spec.nodeDrainTimeout) : null;
  return v1beta1 ? Number(v1beta1[1]) * 1_000 : undefined;
};

/** kubectl drain's filters: a mirror pod or one a DaemonSet owns stays. */
function evictable(pod: JsonObject): boolean {
  if (annotationsOf(pod)[MIRROR_ANNOTATION] !== undefined) return false;
  const owners = metadataOf(pod).ownerReferences;
  return !(Array.isArray(owners) ? owners : []).filter(isObject).some((o) => o.kind === 'DaemonSet' || o.kind === 'Node');
}

export function machineDeletionRound(sim: SimContext): void {
  for (const found of sim.fake.store.list(MACHINES, undefined, null)) {
    if (!isDeleting(found)) continue;
    const finalizers = metadataOf(found).finalizers;
    if (!Array.isArray(finalizers) || !finalizers.includes(MACHINE_FINALIZER)) continue;
    deleteOne(sim, found);
  }
}

function setDeleting(sim: SimContext, machine: JsonObject, reason: string, message: string): JsonObject {
  const before = machine.status && isObject(machine.status) ? JSON.stringify(machine.status) : '';
  const next = withCondition(machine, { type: 'Deleting', status: 'True', reason, message }, sim.now());
  if (JSON.stringify(next.status) !== before) {
    sim.fake.store.put(MACHINES, next);
    sim.said(nameOf(machine), `Deleting: ${reason}${message ? ` (${message})` : ''}`);
  }
  return sim.fake.store.get(MACHINES, namespaceOf(machine), nameOf(machine));
}

function deleteOne(sim: SimContext, start: JsonObject): void {
  let machine = start;
  const annotations = annotationsOf(machine);
  const nodeName = nodeRefOf(machine);
  const isControlPlane = CONTROL_PLANE_LABEL in labelsOf(machine);
  const others = sim.fake.store
    .list(MACHINES, namespaceOf(machine), null)
    .filter((m) => nameOf(m) !== nameOf(machine) && CONTROL_PLANE_LABEL in labelsOf(m) && !isDeleting(m));
  // isDeleteNodeAllowed: no nodeRef, or the last control-plane Machine, keeps the Node (errLastControlPlaneNode).
  const deleteNodeAllowed = nodeName !== undefined && (!isControlPlane || others.length > 0);
  if (deleteNodeAllowed) {
    const preDrain = Object.keys(annotations).filter((k) => k.startsWith(PRE_DRAIN_HOOK_PREFIX));
    if (preDrain.length > 0) {
      setDeleting(sim, machine, 'WaitingForPreDrainHook', `Waiting for pre-drain hooks to succeed (hooks: ${preDrain.sort().join(',')})`);
      return;
    }
    const deletion = deletionOf(machine);
    const drainStarted = typeof deletion.nodeDrainStartTime === 'string' ? Date.parse(deletion.nodeDrainStartTime) : undefined;
    const timeout = drainTimeoutMs(machine);
    const drainAllowed =
      annotations[EXCLUDE_NODE_DRAINING] === undefined &&
      deletion.waitForPreTerminateHookStartTime === undefined &&
      !(timeout !== undefined && drainStarted !== undefined && sim.now() - drainStarted > timeout);
    if (drainAllowed && !drained(sim, machine, nodeName)) return;
  }
  const preTerminate = Object.keys(annotationsOf(machine)).filter((k) => k.startsWith(PRE_TERMINATE_HOOK_PREFIX));
  if (preTerminate.length > 0) {
    machine = withDeletion(machine, 'waitForPreTerminateHookStartTime', sim.now());
    sim.fake.store.put(MACHINES, machine);
    setDeleting(
      sim,
      sim.fake.store.get(MACHINES, namespaceOf(machine), nameOf(machine)),
      'WaitingForPreTerminateHook',
      `Waiting for pre-terminate hooks to succeed (hooks: ${preTerminate.sort().join(',')})`,
    );
    return;
  }
  // The infrastructure goes at once here: a cloud's instance deletion is not what is modelled.
  if (deleteNodeAllowed && sim.fake.store.find(NODES, '', nodeName)) {
    sim.fake.store.remove(NODES, '', nodeName);
    sim.said(nameOf(machine), `Node ${nodeName} deleted`);
  }
  // The pod garbage collector removes the pods of a Node that is gone (gcOrphaned).
  if (nodeName !== undefined && !sim.fake.store.find(NODES, '', nodeName))
    for (const pod of sim.fake.store.list(PODS, undefined, null).filter((p) => isObject(p.spec) && p.spec.nodeName === nodeName))
      sim.fake.store.remove(PODS, namespaceOf(pod), nameOf(pod));
  const current = sim.fake.store.get(MACHINES, namespaceOf(machine), nameOf(machine));
  const metadata = metadataOf(current);
  const rest = (Array.isArray(metadata.finalizers) ? metadata.finalizers : []).filter((f) => f !== MACHINE_FINALIZER);
  sim.fake.store.put(MACHINES, { ...current, metadata: { ...metadata, finalizers: rest } });
  if (rest.length === 0) {
    sim.fake.store.remove(MACHINES, namespaceOf(machine), nameOf(machine));
    sim.said(nameOf(machine), 'Machine gone');
  }
}

/** One drain pass: true once nothing evictable is left on the Node (or the Node is gone). */
function drained(sim: SimContext, start: JsonObject, nodeName: string | undefined): boolean {
  const machine = withDeletion(start, 'nodeDrainStartTime', sim.now());
  if (machine !== start) sim.fake.store.put(MACHINES, machine);
  const node = nodeName === undefined ? undefined : sim.fake.store.find(NODES, '', nodeName);
  if (!node) return true;
  const unreachable = isNodeUnreachable(node);
  const pods = sim.fake.store.list(PODS, undefined, null).filter((p) => isObject(p.spec) && p.spec.nodeName === nodeName && evictable(p));
  const waiting = pods.filter((pod) => {
    const deleted = metadataOf(pod).deletionTimestamp;
    if (deleted === undefined) {
      sim.fake.store.put(PODS, { ...pod, metadata: { ...metadataOf(pod), deletionTimestamp: rfc3339(sim.now()), deletionGracePeriodSeconds: 30 } });
      return true;
    }
    // SkipWaitForDeleteTimeoutSeconds = 1 for an unreachable Node.
    return !(unreachable && sim.now() - Date.parse(text(deleted)) > 1_000);
  });
  if (waiting.length === 0) return true;
  const started = text(deletionOf(sim.fake.store.get(MACHINES, namespaceOf(machine), nameOf(machine))).nodeDrainStartTime);
  setDeleting(
    sim,
    sim.fake.store.get(MACHINES, namespaceOf(machine), nameOf(machine)),
    'DrainingNode',
    `Drain not completed yet (started at ${started}): Pods ${waiting.map((p) => `${namespaceOf(p)}/${nameOf(p)}`).join(', ')} deletionTimestamp set, but still not removed from the Node`,
  );
  return false;
}

/**
 * The kubelet's side of a pod being deleted: a node whose kubelet and runtime work stops its
 * containers and the pod goes; a node without them keeps it Terminating.
 */
export function kubeletRound(sim: SimContext): void {
  for (const pod of sim.fake.store.list(PODS, undefined, null)) {
    if (!isDeleting(pod) || !isObject(pod.spec)) continue;
    const node = text(pod.spec.nodeName);
    if (sim.fake.faultOf(node) === undefined && sim.fake.store.find(NODES, '', node)) sim.fake.store.remove(PODS, namespaceOf(pod), nameOf(pod));
  }
}
