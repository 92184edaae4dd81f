// A Machine or Node that is none of the cluster's control-plane Machines: a MachineHealthCheck
// pointed at workers by mistake asks for one. Views list the control-plane Machines only (the ones
// that run etcd members), so such a target is said for what it is, never taken for a control-plane
// Machine whose member is gone. Pure.
import type { Decision } from '../common/index.ts';
import type { ClusterView } from '../view/index.ts';

/** CAPI's MachineControlPlaneLabel, as the sentence names it. */
const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';

/**
 * NOT_CONTROL_PLANE when the view lists the control-plane Machines and the target's Machine (or
 * Node) is not among them, nor where a member runs; undefined when it is, or when no Machines were read.
 */
export function notControlPlane(
  view: ClusterView | undefined,
  target: Record<string, string>,
  capiCluster: string | undefined,
): Extract<Decision, { kind: 'block' }> | undefined {
  const machines = view?.machines;
  if (!view || !machines || view.members.length === 0) return undefined;
  const { machineName, nodeName } = target;
  const named = machineName !== undefined ? `Machine ${machineName}` : nodeName !== undefined ? `Node ${nodeName}` : undefined;
  if (named === undefined) return undefined;
  const listed = machineName !== undefined ? machines.some((m) => m.name === machineName) : machines.some((m) => m.nodeName === nodeName);
  const hostsMember = view.members.some((m) =>
    machineName !== undefined ? m.host?.machine?.name === machineName : m.host?.node === nodeName || m.name === nodeName,
  );
  if (listed || hostsMember) return undefined;
  const whose = capiCluster === undefined ? "the cluster's" : `cluster ${capiCluster}'s`;
  const names = machines.map((m) => m.name).sort();
  const what =
    machineName !== undefined ? `${named} is not one of ${whose} control-plane Machines` : `${named} is the node of none of ${whose} control-plane Machines`;
  return {
    kind: 'block',
    reason: 'NOT_CONTROL_PLANE',
    message: `${what} (${names.length > 0 ? names.join(', ') : 'none'}: those labelled ${CONTROL_PLANE_LABEL}), so no etcd member of this cluster runs there: it is a worker, another cluster's, or already gone; blocked, nothing is removed or deleted: point the MachineHealthCheck's external remediation at control-plane Machines only.`,
    evidence: { target, controlPlaneMachines: names },
  };
}
