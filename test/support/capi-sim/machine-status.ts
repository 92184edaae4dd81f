// The Machine controller's status (core/reconcilers/machine/machine_controller_status.go
// setNodeHealthyAndReadyConditions at ae7ff047): the v1beta2 condition NodeReady mirrors the Node's
// Ready (reason NodeReady, NodeNotReady or NodeReadyUnknown; the message "* Node.Ready: <the
// kubelet's message>" when not True), and a Node gone after the Machine had one is NodeDeleted,
// False. A v1beta1 Machine carries v1beta2 conditions under status.v1beta2.conditions, as Cluster
// API serves it.
import type { JsonObject } from '../fakes/kube/patch.ts';
import { isObject, text } from '../fakes/kube/patch.ts';
import { MACHINES, NODES, isDeleting, nameOf, nodeCondition, nodeRefOf, rfc3339 } from './capi-objects.ts';
import type { SimContext } from './sim-context.ts';

const REASONS: Record<string, string> = { True: 'NodeReady', False: 'NodeNotReady', Unknown: 'NodeReadyUnknown' };

function nodeReadyOf(sim: SimContext, machine: JsonObject): JsonObject | undefined {
  const nodeName = nodeRefOf(machine);
  if (nodeName === undefined) return undefined;
  const node = sim.fake.store.find(NODES, '', nodeName);
  if (!node)
    return {
      type: 'NodeReady',
      status: 'False',
      reason: 'NodeDeleted',
      message: isDeleting(machine) ? `Node ${nodeName} has been deleted` : `Node ${nodeName} has been deleted while the Machine still exists`,
    };
  const ready = nodeCondition(node, 'Ready');
  if (!ready) return { type: 'NodeReady', status: 'Unknown', reason: 'NodeReadyUnknown', message: '* Node.Ready: Condition not yet reported' };
  const status = text(ready.status);
  return {
    type: 'NodeReady',
    status,
    reason: REASONS[status] ?? 'NodeReadyUnknown',
    ...(status !== 'True' && text(ready.message) !== '' ? { message: `* Node.Ready: ${text(ready.message)}` } : {}),
    lastTransitionTime: text(ready.lastTransitionTime) || rfc3339(sim.now()),
  };
}

export function machineStatusRound(sim: SimContext): void {
  for (const machine of sim.fake.store.list(MACHINES, undefined, null)) {
    const next = nodeReadyOf(sim, machine);
    if (!next) continue;
    const status = isObject(machine.status) ? machine.status : {};
    const v1beta2 = isObject(status.v1beta2) ? status.v1beta2 : {};
    const conditions = (Array.isArray(v1beta2.conditions) ? v1beta2.conditions : []).filter(isObject);
    const before = conditions.find((c) => c.type === 'NodeReady');
    if (before && before.status === next.status && before.reason === next.reason && before.message === next.message) continue;
    const kept = before !== undefined && before.status === next.status ? before.lastTransitionTime : undefined;
    const condition = { ...next, lastTransitionTime: kept ?? next.lastTransitionTime ?? rfc3339(sim.now()) };
    sim.fake.store.put(MACHINES, {
      ...machine,
      status: { ...status, v1beta2: { ...v1beta2, conditions: [...conditions.filter((c) => c !== before), condition] } },
    });
    if (next.status !== 'True') sim.said(nameOf(machine), `NodeReady ${text(next.status)}: ${text(next.reason)}`);
  }
}
