// The cluster view: one probe folded into what the decisions need.
import { boundedView } from './bounded-view.ts';
import { identityOf, isMismatched, type ClusterIdentity } from './cluster-identity.ts';
import {
  NO_LEADER,
  type HostEvidence,
  type MachineSummary,
  type MemberId,
  type MemberInfo,
  type MemberStatus,
  type PathProbe,
  type ProbeSample,
} from '../common/index.ts';

export interface MemberView extends MemberInfo {
  paths: PathProbe[];
  reachable: boolean;
  /** A member that was added but never started has no name and no client URLs. */
  started: boolean;
  /**
   * Reachable, started, no alarm of its own and no errors ("no leader" aside: that is the
   * election's, not the member's; NOSPACE aside: that is the cluster's, see CLUSTER_ALARMS).
   */
  healthy: boolean;
  status?: MemberStatus;
  /** Fastest answering path, when reachable. */
  latencyMs?: number;
  /** Where it runs, when kube access said. */
  host?: HostEvidence;
}

export type LeaderConsensus = 'agreed' | 'split' | 'none';

export interface LeaderView {
  consensus: LeaderConsensus;
  /** Set when consensus is agreed. */
  id?: MemberId;
  name?: string;
  /** Raft term of the agreed leader, when every reporter agrees on it too. */
  term?: number;
  /** Who reported what, so evidence can name it. */
  reports: { memberId: MemberId; leaderId: MemberId; term: number }[];
}

export interface QuorumFigures {
  voting: number;
  healthyVoting: number;
  /**
   * Voting members up as far as we can tell: the healthy ones, plus the leader the answering
   * members agree on when we cannot reach it ourselves (its heartbeats reach them, so it votes).
   */
  votingUp: number;
  /** Votes needed for quorum: floor(voting/2)+1. */
  size: number;
  /** votingUp ≥ size: the one rule for "the cluster holds quorum now", for the view and the gate. */
  ok: boolean;
}

export interface ClusterView {
  at: number;
  members: MemberView[];
  leader: LeaderView;
  quorum: QuorumFigures;
  /** Why no seed gave a member list, when none did: the only facts an empty view has. */
  listFailures: PathProbe[];
  /** Which etcd cluster answered. Absent only in views kept before ids were recorded. */
  identity?: ClusterIdentity;
  /** Why the kube paths were not resolved this time (the workload API server, say). */
  pathLookFailure?: string;
  /** The cluster's control-plane Machines, when the management cluster was read (none past VIEW_LIMITS.machines). */
  machines?: MachineSummary[];
}

export const quorumSize = (voting: number): number => Math.floor(voting / 2) + 1;

/**
 * etcd lists this among a member's status errors while it has no leader. That is a fact about the
 * election, which the evidence rule judges from leaderId; counting it against the member would
 * make every follower "unhealthy" during a normal election and block on quorum instead of waiting.
 */
const NO_LEADER_ERROR = 'etcdserver: no leader';

const memberErrors = (status: MemberStatus): string[] => status.errors.filter((e) => e !== NO_LEADER_ERROR);

/**
 * Alarms that say nothing against the member that raised them. NOSPACE is the cluster's quota
 * reached: etcd then refuses writes on every member until it is disarmed, and maintenance clears
 * it; the member still votes and answers, so it is no member lost, and counting it down would send
 * a person to disaster recovery for a full disk. CORRUPT is the member's own data, and counts.
 */
export const CLUSTER_ALARMS: ReadonlySet<string> = new Set(['NOSPACE']);

/** The alarms a member raised that count against it (every alarm but the cluster's). */
/**
 * The members a NOSPACE alarm stands for, as any member that answered reports it (its own, or
 * another's: etcd lists every active alarm of the cluster in each Status), the one that raised it
 * down or not. Any of them makes etcd refuse every write.
 */
export function noSpaceRaisedBy(view: { readonly members: readonly MemberView[] }): MemberId[] {
  const raised = new Set<MemberId>();
  for (const m of view.members) {
    if (m.status?.alarms.includes('NOSPACE')) raised.add(m.id);
    for (const other of m.status?.othersAlarms ?? []) if (other.alarm === 'NOSPACE') raised.add(other.member);
  }
  return [...raised];
}

export const memberAlarms = (status: Pick<MemberStatus, 'alarms'>): string[] => status.alarms.filter((a) => !CLUSTER_ALARMS.has(a));

export function toMemberView(probe: ProbeSample['members'][number]): MemberView {
  const { member, paths, status, host } = probe;
  const answered = paths.filter((p) => p.reachability === 'ok');
  const reachable = answered.length > 0;
  const started = member.name !== '' && member.clientUrls.length > 0;
  const healthy = reachable && started && !!status && memberAlarms(status).length === 0 && memberErrors(status).length === 0;
  const view: MemberView = { ...member, paths, reachable, started, healthy };
  if (status) view.status = status;
  if (host) view.host = host;
  if (reachable) view.latencyMs = Math.min(...answered.map((p) => p.latencyMs));
  return view;
}

export function leaderView(members: MemberView[]): LeaderView {
  const reports = members.filter((m) => m.status).map((m) => ({ memberId: m.id, leaderId: m.status!.leaderId, term: m.status!.raftTerm }));
  const claimed = new Set(reports.map((r) => r.leaderId).filter((id) => id !== NO_LEADER));
  if (claimed.size === 0) return { consensus: 'none', reports };
  const everyoneSeesOne = claimed.size === 1 && reports.every((r) => r.leaderId !== NO_LEADER);
  if (!everyoneSeesOne) return { consensus: 'split', reports };
  const id = [...claimed][0]!;
  const terms = new Set(reports.map((r) => r.term));
  const view: LeaderView = { consensus: 'agreed', id, reports };
  const name = members.find((m) => m.id === id)?.name;
  if (name) view.name = name;
  if (terms.size === 1) view.term = [...terms][0]!;
  return view;
}

/**
 * Whether a voting member counts as up for "quorum now": healthy, or the leader the answering
 * members agree on while we cannot reach it. Only when we cannot reach it: a leader we reach is
 * judged by what it says itself.
 */
export const countsAsUp = (m: MemberView, leader: LeaderView): boolean => m.healthy || (leader.consensus === 'agreed' && m.id === leader.id && !m.reachable);

export function quorumFigures(members: MemberView[], leader: LeaderView): QuorumFigures {
  const voting = members.filter((m) => !m.isLearner);
  const healthyVoting = voting.filter((m) => m.healthy).length;
  const votingUp = voting.filter((m) => countsAsUp(m, leader)).length;
  const size = quorumSize(voting.length);
  return { voting: voting.length, healthyVoting, votingUp, size, ok: voting.length > 0 && votingUp >= size };
}

/** The view of one probe, within the view limits (bounded-view.ts). */
export function buildClusterView(sample: ProbeSample): ClusterView {
  const members = sample.members.map(toMemberView);
  const leader = leaderView(members);
  return boundedView({
    at: sample.at,
    members,
    leader,
    quorum: quorumFigures(members, leader),
    listFailures: sample.listFailures,
    identity: identityOf(sample, members),
    ...(sample.pathLookFailure ? { pathLookFailure: sample.pathLookFailure } : {}),
    ...(sample.machines ? { machines: sample.machines } : {}),
  });
}

/**
 * A member list answered and does not hold `id`: the member was removed. No list proves nothing,
 * and neither does a list among answers from two clusters: it may be the other cluster's.
 */
export const memberGone = (view: ClusterView, id: MemberId): boolean =>
  view.members.length > 0 && !isMismatched(view) && !view.members.some((m) => m.id === id);

export const describeMember = (m: Pick<MemberInfo, 'id' | 'name'>): string => (m.name ? `${m.name} (${m.id})` : m.id);

/** A member id as a sentence names it, looked up in the view; '0' (or nothing) reads "no leader". */
export function describeMemberIn(view: ClusterView | undefined, id: MemberId | undefined): string {
  if (!id || id === NO_LEADER) return 'no leader';
  const m = view?.members.find((x) => x.id === id);
  return m ? describeMember(m) : id;
}
