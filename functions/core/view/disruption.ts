// Another disruption under way: a member whose Node is cordoned (a drain stops its pods; Cluster
// API's drain and every kubectl drain begin with a cordon) or whose Machine is deleting may go down
// at any moment. Remediation, maintenance and hygiene count such a member as down in their quorum
// projections (compare openshift's cluster-etcd-operator, which gates etcd restarts on a cordon).
import type { MemberView } from './view.ts';

/** Why a member may go down any moment now; undefined when nothing says so. */
export function disruptionOf(m: MemberView): string | undefined {
  if (m.host?.machine?.deleting) return `its Machine ${m.host.machine.name} is being deleted`;
  if (m.host?.cordoned) return `its Node ${m.host.node ?? m.name} is cordoned (a drain stops its pods)`;
  return undefined;
}

/** The healthy voting members, other than `exceptId`, that a disruption may take down. */
export const atRiskMembers = (members: readonly MemberView[], exceptId?: string): MemberView[] =>
  members.filter((m) => m.id !== exceptId && !m.isLearner && m.healthy && disruptionOf(m) !== undefined);
