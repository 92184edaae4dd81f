// A Machine whose etcd member is already out of etcd (removed by hand, or by an earlier run): KCP
// deletes such a Machine without touching etcd, and so do we. Pure.
import type { Decision, MachineSummary } from '../common/index.ts';
import type { ClusterView } from '../view/index.ts';

/** The Machine a selector names, when the view lists it and no member of the list runs on it. */
export function memberlessMachine(view: ClusterView | undefined, target: Record<string, string>): MachineSummary | undefined {
  if (!view?.machines || view.members.length === 0) return undefined;
  const { machineName, nodeName } = target;
  const machine = machineName ? view.machines.find((m) => m.name === machineName) : nodeName ? view.machines.find((m) => m.nodeName === nodeName) : undefined;
  if (!machine) return undefined;
  const runsOn = view.members.some(
    (m) => m.host?.machine?.name === machine.name || (machine.nodeName !== undefined && (m.host?.node === machine.nodeName || m.name === machine.nodeName)),
  );
  return runsOn ? undefined : machine;
}

export function approveMemberlessMachine(view: ClusterView, machine: MachineSummary): Decision {
  const members = view.members.map((m) => m.name || m.id).join(', ');
  return {
    kind: 'approve',
    reason: 'MEMBER_ALREADY_REMOVED',
    leaderMove: 'not-needed',
    message: `Machine ${machine.name}${machine.nodeName ? ` (node ${machine.nodeName})` : ''} has no etcd member any more (members: ${members}); nothing is removed from etcd, and the Machine goes straight to replacement, as KCP does.`,
    evidence: { machine, members },
  };
}
