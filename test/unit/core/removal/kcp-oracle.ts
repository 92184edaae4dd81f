// An independent port of Cluster API KubeadmControlPlane's etcd quorum rule, used only as a test
// oracle: our gate must refuse wherever this refuses.
//
// Source: kubernetes-sigs/cluster-api, main at ae7ff047db499ac3858ade268ba38db8c9f128bb (2026-08),
// controlplane/kubeadm/reconcilers/kubeadmcontrolplane/remediation.go, func (r *Reconciler)
// targetEtcdClusterHealthy (before the July 2026 restructuring (#13894) the same function lived in
// controlplane/kubeadm/internal/controllers/remediation.go). Its table test is
// TestTargetEtcdClusterHealthy in remediation_test.go next to it; the property-test oracle
// expectedEtcdHealthy (etcd_health_property_test.go, PR #13680) re-derives the same rule.
// The input shapes mirror what the Go code reads: etcd.Member, the Machines' NodeRef and
// EtcdMemberHealthy condition, and etcd.MemberAlarm. Nothing here imports our own core.

/** etcd.Member as KCP reads it from MemberList: a member that never started has no name. */
export interface KcpEtcdMember {
  id: string;
  name: string;
  isLearner: boolean;
}

/** The Machine fields the rule reads: its Node's name and its EtcdMemberHealthy condition. */
export interface KcpMachine {
  name: string;
  nodeRefName?: string;
  /** Machine condition EtcdMemberHealthy; only 'True' counts as healthy (conditions.IsTrue). */
  etcdMemberHealthy?: 'True' | 'False' | 'Unknown';
}

/** etcd.MemberAlarm; 'NONE' is etcd.AlarmOK. */
export interface KcpAlarm {
  memberId: string;
  type: 'NONE' | 'NOSPACE' | 'CORRUPT';
}

export interface KcpControlPlane {
  etcdMembers: KcpEtcdMember[];
  machines: KcpMachine[];
  etcdMembersAlarms: KcpAlarm[];
}

/**
 * The Machine's EtcdMemberHealthy condition as KCP sets it from the member list and the alarms
 * (controlplane/kubeadm/pkg/workload_cluster_conditions.go, updateManagedEtcdConditions): False
 * when no member carries the Node's name (a member that never started has none), when the member
 * is a learner, or when it has an alarm; True otherwise. KCP does not ask each member itself, so
 * `uninspected` stands for the cases where it could not read the member at all (Unknown).
 */
export function etcdMemberHealthyCondition(
  nodeName: string,
  members: KcpEtcdMember[],
  alarms: KcpAlarm[],
  uninspected = false,
): NonNullable<KcpMachine['etcdMemberHealthy']> {
  if (uninspected) return 'Unknown';
  const member = members.find((m) => m.name === nodeName);
  if (!member || member.isLearner) return 'False';
  if (alarms.some((a) => a.memberId === member.id && a.type !== 'NONE')) return 'False';
  return 'True';
}

/**
 * targetEtcdClusterHealthy(ctx, controlPlane, addEtcdMember, etcdMemberToBeDeleted): can the etcd
 * cluster move to the target state (one member added, and/or the member named
 * etcdMemberToBeDeleted removed) without losing quorum? Line for line with the Go code.
 */
export function targetEtcdClusterHealthy(controlPlane: KcpControlPlane, addEtcdMember: boolean, etcdMemberToBeDeleted: string): boolean {
  const healthyMembers: string[] = [];
  const unhealthyMembers: string[] = [];

  let targetLearnerMembers = 0;
  let targetVotingMembers = 0;

  // The new member counts as unhealthy (worst case) unless the cluster has 0 or 1 members.
  if (addEtcdMember) {
    targetVotingMembers = 1;
    if (controlPlane.etcdMembers.length > 1) unhealthyMembers.push('1 new member (worst case)');
    else healthyMembers.push('1 new member (best case)');
  }

  for (const etcdMember of controlPlane.etcdMembers) {
    // "Consider members without a name as a learner (they are still starting up)."
    if (etcdMember.name === '') {
      targetLearnerMembers++;
      unhealthyMembers.push('1 member starting (worst case)');
      continue;
    }

    // The member to be deleted is not part of the target cluster (matched by name).
    if (etcdMemberToBeDeleted === etcdMember.name) continue;

    if (etcdMember.isLearner) targetLearnerMembers++;
    else targetVotingMembers++;

    const machine = controlPlane.machines.find((m) => m.nodeRefName !== undefined && m.nodeRefName !== '' && m.nodeRefName === etcdMember.name);

    // No Machine: health is unknown, so KCP falls back on the member's alarms only.
    if (!machine) {
      const hasAlarms = controlPlane.etcdMembersAlarms.some((alarm) => alarm.type !== 'NONE' && alarm.memberId === etcdMember.id);
      if (hasAlarms) unhealthyMembers.push(`${etcdMember.name} (no machine)`);
      else healthyMembers.push(`${etcdMember.name} (no machine)`);
      continue;
    }

    if (machine.etcdMemberHealthy !== 'True') {
      unhealthyMembers.push(`${etcdMember.name} (${machine.name})`);
      continue;
    }
    healthyMembers.push(`${etcdMember.name} (${machine.name})`);
  }

  // Go: targetQuorum := (targetVotingMembers / 2.0) + 1, integer division on an int.
  const targetQuorum = Math.trunc(targetVotingMembers / 2) + 1;
  let canSafelyTransitionToTargetState = targetVotingMembers - unhealthyMembers.length >= targetQuorum;

  // "KCP should wait for those members being promoted before taking further steps."
  if (targetLearnerMembers > 0) canSafelyTransitionToTargetState = false;

  return canSafelyTransitionToTargetState;
}
