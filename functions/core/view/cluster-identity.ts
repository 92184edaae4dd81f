// Which etcd cluster a probe reached: the cluster_id every answer carried. Endpoints of two
// clusters are not one cluster, and nothing may be judged or removed across them. Pure.
import type { EtcdClusterId, IdentityReport, ProbeSample } from '../common/index.ts';
import type { ClusterView, MemberView } from './view.ts';

export interface ClusterIdentity {
  /** The one cluster_id every answer carried: what an incident or the directory binds to. */
  id?: EtcdClusterId;
  /** Every distinct cluster_id seen, sorted; more than one is CLUSTER_MISMATCH. */
  ids: EtcdClusterId[];
  /** Which endpoint answered with which id: the seeds, then the members not among them. */
  reports: IdentityReport[];
  /** The seed whose member list the view's members are. */
  listedBy?: IdentityReport;
}

/** The endpoint a member's status came from: its first path that answered, in policy order. */
const answeredAt = (m: MemberView): string | undefined => m.paths.find((p) => p.reachability === 'ok')?.endpoint;

export function identityOf(sample: ProbeSample, members: MemberView[]): ClusterIdentity {
  const reports = new Map<string, IdentityReport>();
  const add = (report: IdentityReport) => reports.set(`${report.endpoint} ${report.clusterId}`, report);
  sample.seeds.forEach(add);
  for (const m of members) {
    const endpoint = answeredAt(m);
    if (endpoint !== undefined && m.status?.clusterId !== undefined) add({ endpoint, clusterId: m.status.clusterId });
  }
  const all = [...reports.values()];
  const ids = [...new Set(all.map((r) => r.clusterId))].sort();
  const identity: ClusterIdentity = { ids, reports: all };
  if (ids.length === 1) identity.id = ids[0]!;
  if (sample.listedBy) identity.listedBy = sample.listedBy;
  return identity;
}

/** The etcd cluster_id of a view when every answer agreed: what an incident and the directory bind to. */
export const clusterIdOf = (view: ClusterView | undefined): EtcdClusterId | undefined => view?.identity?.id;

/** More than one cluster answered. Views kept before ids were recorded have no identity: not a mismatch. */
export const isMismatched = (view: ClusterView | undefined): boolean => (view?.identity?.ids.length ?? 0) > 1;

export interface ClusterMismatch {
  ids: EtcdClusterId[];
  reports: IdentityReport[];
  /** One sentence naming every endpoint and the id it answered with. */
  message: string;
}

export function clusterMismatch(view: ClusterView | undefined): ClusterMismatch | undefined {
  const identity = view?.identity;
  if (!view || !identity || identity.ids.length <= 1) return undefined;
  const nameAt = (endpoint: string) => view.members.find((m) => m.clientUrls.includes(endpoint) || m.paths.some((p) => p.endpoint === endpoint))?.name;
  const named = (endpoint: string) => {
    const name = nameAt(endpoint);
    return name ? `${endpoint} (${name})` : endpoint;
  };
  const groups = identity.ids.map((id) => {
    const endpoints = [...new Set(identity.reports.filter((r) => r.clusterId === id).map((r) => named(r.endpoint)))];
    return `${endpoints.join(', ')} answered with cluster id ${id}`;
  });
  return {
    ids: identity.ids,
    reports: identity.reports,
    message: `The endpoints are not one etcd cluster (${groups.join('; ')}), so nothing can be judged or removed; blocked, give the endpoints of one cluster only.`,
  };
}

/**
 * The identity a probe reached, against the one its incident (or the cluster's directory entry)
 * is bound to: another etcd cluster answering under the same name is refused, never acted on.
 */
export function identityChanged(
  bound: { etcdClusterId: string; what: string } | undefined,
  view: ClusterView,
  clusterName: string,
): { reason: 'CLUSTER_MISMATCH'; message: string } | undefined {
  const seen = clusterIdOf(view);
  if (!bound || !seen || seen === bound.etcdClusterId) return undefined;
  const who = [...new Set(view.identity?.reports.map((r) => r.endpoint) ?? [])].join(', ');
  return {
    reason: 'CLUSTER_MISMATCH',
    message:
      `Cluster ${clusterName} is etcd cluster ${bound.etcdClusterId} (${bound.what}), but its endpoints now answer as etcd cluster ${seen} (${who}); ` +
      `blocked, nothing is judged or removed across clusters. If the cluster was rebuilt on purpose, remediate it under a new cluster name or state file.`,
  };
}
