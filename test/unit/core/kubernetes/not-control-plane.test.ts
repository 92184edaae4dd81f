// NOT_CONTROL_PLANE: a Machine or Node that is none of the cluster's control-plane Machines.
import { describe, expect, it } from 'vitest';
import { notControlPlane } from '../../../../functions/core/kubernetes/not-control-plane.ts';
import type { ClusterView } from '../../../../functions/core/view/view.ts';
import { cluster, nameOf } from '../fixtures.ts';

/** Three members etcd-0..2, each on node etcd-i and Machine wl-cp-i, as the kube look lists them. */
function withMachines(): ClusterView {
  const view = cluster(0, 3);
  return {
    ...view,
    members: view.members.map((m, i) => ({ ...m, host: { node: nameOf(i), nodeExists: true, machine: { name: `wl-cp-${i}`, deleting: false } } })),
    machines: [0, 1, 2].map((i) => ({ name: `wl-cp-${i}`, nodeName: nameOf(i), deleting: false })),
  };
}

describe('notControlPlane', () => {
  it('a worker Machine: blocked, naming the control-plane Machines and the label that makes one', () => {
    const decision = notControlPlane(withMachines(), { machineName: 'wl-md-0-7' }, 'wl');
    expect(decision).toEqual({
      kind: 'block',
      reason: 'NOT_CONTROL_PLANE',
      message:
        "Machine wl-md-0-7 is not one of cluster wl's control-plane Machines (wl-cp-0, wl-cp-1, wl-cp-2: those labelled cluster.x-k8s.io/control-plane), so no etcd member of this cluster runs there: it is a worker, another cluster's, or already gone; blocked, nothing is removed or deleted: point the MachineHealthCheck's external remediation at control-plane Machines only.",
      evidence: { target: { machineName: 'wl-md-0-7' }, controlPlaneMachines: ['wl-cp-0', 'wl-cp-1', 'wl-cp-2'] },
    });
  });

  it('a worker Node: blocked the same way', () => {
    expect(notControlPlane(withMachines(), { nodeName: 'worker-3' }, undefined)?.message).toMatch(
      /^Node worker-3 is the node of none of the cluster's control-plane Machines \(wl-cp-0, wl-cp-1, wl-cp-2: those labelled cluster\.x-k8s\.io\/control-plane\)/,
    );
  });

  it('says nothing of a control-plane Machine, of a member’s host, or when no Machines were read', () => {
    const view = withMachines();
    expect(notControlPlane(view, { machineName: 'wl-cp-1' }, 'wl')).toBeUndefined();
    expect(notControlPlane(view, { nodeName: nameOf(2) }, 'wl')).toBeUndefined();
    // A member on a Machine the list missed (it joined after the list was read) is no worker.
    expect(notControlPlane({ ...view, machines: [] }, { machineName: 'wl-cp-0' }, 'wl')).toBeUndefined();
    const { machines: _machines, ...unread } = view;
    expect(notControlPlane(unread, { machineName: 'wl-md-0-7' }, 'wl')).toBeUndefined();
    expect(notControlPlane({ ...view, members: [] }, { machineName: 'wl-md-0-7' }, 'wl')).toBeUndefined();
    expect(notControlPlane(view, { memberName: 'etcd-9' }, 'wl')).toBeUndefined();
  });
});
