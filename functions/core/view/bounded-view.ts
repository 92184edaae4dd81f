// A view within VIEW_LIMITS and TEXT_LIMITS, so neither MembersProbed nor the incident that keeps
// the view grows with what etcd or Kubernetes happen to say: long texts are cut (they explain, no
// rule reads past their start), long lists keep their head. What the rules derive (reachable,
// healthy, the leader, quorum) is derived before, from everything the probe saw. The members are
// never cut: a view of more than VIEW_LIMITS.members is refused where it is made. Pure.
import type { ClusterIdentity } from './cluster-identity.ts';
import {
  type Decision,
  type HostEvidence,
  type IdentityReport,
  type MachineSummary,
  type MemberStatus,
  type PathProbe,
  clipAll,
  clipText,
  TEXT_LIMITS as T,
  VIEW_LIMITS as V,
} from '../common/index.ts';
import type { ClusterView, MemberView } from './view.ts';

const boundedProbe = (probe: PathProbe): PathProbe => ({
  ...probe,
  endpoint: clipText(probe.endpoint, T.endpoint),
  ...(probe.failure ? { failure: { ...probe.failure, message: clipText(probe.failure.message, T.message) } } : {}),
});

const boundedStatus = (status: MemberStatus): MemberStatus => ({
  ...status,
  alarms: clipAll(status.alarms, V.alarms, T.alarm),
  ...(status.othersAlarms ? { othersAlarms: status.othersAlarms.slice(0, V.alarms).map((a) => ({ ...a, alarm: clipText(a.alarm, T.alarm) })) } : {}),
  errors: clipAll(status.errors, V.errors, T.statusError),
  version: clipText(status.version, T.version),
});

function boundedHost(host: HostEvidence): HostEvidence {
  const { node, pod, machine, nodeExists, cordoned } = host;
  return {
    ...(node === undefined ? {} : { node: clipText(node, T.name) }),
    nodeExists,
    ...(cordoned ? { cordoned } : {}),
    ...(pod === undefined ? {} : { pod: clipText(pod, T.pod) }),
    ...(machine ? { machine: { ...machine, name: clipText(machine.name, T.name) } } : {}),
  };
}

const boundedMember = (member: MemberView): MemberView => ({
  ...member,
  name: clipText(member.name, T.name),
  clientUrls: clipAll(member.clientUrls, V.urls, T.url),
  peerUrls: clipAll(member.peerUrls, V.urls, T.url),
  paths: member.paths.slice(0, V.paths).map(boundedProbe),
  ...(member.status ? { status: boundedStatus(member.status) } : {}),
  ...(member.host ? { host: boundedHost(member.host) } : {}),
});

const boundedReport = (report: IdentityReport): IdentityReport => ({ ...report, endpoint: clipText(report.endpoint, T.endpoint) });

const boundedIdentity = (identity: ClusterIdentity): ClusterIdentity => ({
  ...identity,
  // Two ids already say CLUSTER_MISMATCH: the list keeps its head, never fewer than two.
  ids: identity.ids.slice(0, V.identityIds),
  reports: identity.reports.slice(0, V.identityReports).map(boundedReport),
  ...(identity.listedBy ? { listedBy: boundedReport(identity.listedBy) } : {}),
});

const boundedMachine = (machine: MachineSummary): MachineSummary => ({
  ...machine,
  name: clipText(machine.name, T.name),
  ...(machine.nodeName === undefined ? {} : { nodeName: clipText(machine.nodeName, T.name) }),
  // A uid cut short would match no Machine, and so delete none: safe, and never seen (uids are 36).
  ...(machine.uid === undefined ? {} : { uid: clipText(machine.uid, T.name) }),
});

export function boundedView(view: ClusterView): ClusterView {
  const { machines, ...rest } = view;
  const { identity, pathLookFailure } = rest;
  return {
    ...rest,
    members: view.members.map(boundedMember),
    leader: { ...view.leader, ...(view.leader.name === undefined ? {} : { name: clipText(view.leader.name, T.name) }) },
    listFailures: view.listFailures.slice(0, V.listFailures).map(boundedProbe),
    ...(identity ? { identity: boundedIdentity(identity) } : {}),
    ...(pathLookFailure === undefined ? {} : { pathLookFailure: clipText(pathLookFailure, T.message) }),
    // A list cut short would make a Machine left out look like a worker: more than the limit, none is kept.
    ...(machines && machines.length <= V.machines ? { machines: machines.map(boundedMachine) } : {}),
  };
}

/**
 * CLUSTER_TOO_LARGE: more members than a view holds. etcd advises seven voters at most; a cluster
 * past the limit is said for what it is, never judged on a view no event could carry.
 */
export function oversizedView(view: ClusterView): Extract<Decision, { kind: 'block' }> | undefined {
  const members = view.members.length;
  if (members <= V.members) return undefined;
  return {
    kind: 'block',
    reason: 'CLUSTER_TOO_LARGE',
    message: `The etcd cluster lists ${members} members, more than the ${V.members} a view holds (etcd advises at most seven voting members); blocked, nothing is judged or removed: remediate it by hand.`,
    evidence: { members, limit: V.members },
  };
}
