// Another disruption under way: a member whose Node is cordoned (a drain stops its pods; Cluster
// API's drain and every kubectl drain begin with a cordon) or whose Machine is deleting may go down
// at any moment; so may one member more while a control-plane Machine is being created (a rollout
// or a scale-up: KubeadmControlPlane's rollout adds a Machine, then deletes an outdated one, which
// one not known ahead; a Machine whose UpToDate condition is False is one it will take, as
// KubeadmControlPlane's upToDateReplicas below its replicas says). Remediation, maintenance and hygiene count such a member as down in their quorum
// projections (compare openshift's cluster-etcd-operator, which gates etcd restarts on a cordon).
import type { ClusterView, MemberView } from './view.ts';

/** Why a member may go down any moment now; undefined when nothing says so. */
export function disruptionOf(m: MemberView): string | undefined {
  if (m.host?.machine?.deleting) return `its Machine ${m.host.machine.name} is being deleted`;
  if (m.host?.cordoned) return `its Node ${m.host.node ?? m.name} is cordoned (a drain stops its pods)`;
  if (m.host?.machine?.outdated) return `its Machine ${m.host.machine.name} is not up to date (the control plane's rollout replaces it next)`;
  return undefined;
}

/** The healthy voting members, other than `exceptId`, that a disruption may take down. */
export const atRiskMembers = (members: readonly MemberView[], exceptId?: string): MemberView[] =>
  members.filter((m) => m.id !== exceptId && !m.isLearner && m.healthy && disruptionOf(m) !== undefined);

/** A control-plane Machine being created (no Node yet, not deleting): one member more may go down next, which one unknown; undefined when none is. */
export function rolloutOf(view: Pick<ClusterView, 'machines' | 'members'>): string | undefined {
  // A member whose Machine is outdated is the one the rollout takes: counted as that member, not once more.
  if (view.members.some((m) => m.host?.machine?.outdated && !m.host.machine.deleting)) return undefined;
  const creating = (view.machines ?? []).filter((m) => !m.deleting && m.nodeName === undefined);
  if (creating.length === 0) return undefined;
  const names = creating.map((m) => m.name).join(', ');
  return `Machine ${names} ${creating.length === 1 ? 'is' : 'are'} being created (a rollout or a scale-up: Cluster API may take an outdated member down next)`;
}
