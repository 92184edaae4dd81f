// One member's /metrics (parsed) and its Status to leader hygiene's MemberScrape. Pure. A metric
// hygiene needs that the text lacks is refused by name: a guess of 0 would read as a healthy disk.
import type { HistogramScrape, MemberScrape } from '../../core/hygiene/index.ts';
import type { MemberId, MemberStatus } from '../../core/common/index.ts';
import { histogramsOf, type Family } from '../../lib/prometheus-text.ts';

export const ETCD_METRICS = {
  isLeader: 'etcd_server_is_leader',
  hasLeader: 'etcd_server_has_leader',
  walFsync: 'etcd_disk_wal_fsync_duration_seconds',
  backendCommit: 'etcd_disk_backend_commit_duration_seconds',
  heartbeatSendFailures: 'etcd_server_heartbeat_send_failures_total',
  slowApplies: 'etcd_server_slow_apply_total',
  leaderChangesSeen: 'etcd_server_leader_changes_seen_total',
  proposalsCommitted: 'etcd_server_proposals_committed_total',
  proposalsApplied: 'etcd_server_proposals_applied_total',
  peerRoundTrip: 'etcd_network_peer_round_trip_time_seconds',
  processStartTime: 'process_start_time_seconds',
} as const;

export function scrapeOf(memberId: MemberId, at: number, families: readonly Family[], status: MemberStatus): MemberScrape {
  const byName = new Map(families.map((f) => [f.name, f]));
  const valueOf = (name: string): number | undefined => byName.get(name)?.samples.find((s) => s.name === name && Object.keys(s.labels).length === 0)?.value;
  const required = (name: string): number => {
    const value = valueOf(name);
    if (value === undefined) throw new Error(`/metrics has no ${name}`);
    return value;
  };
  const histogram = (name: string): HistogramScrape => {
    const family = byName.get(name);
    const series = family?.type === 'histogram' ? histogramsOf(family).find((s) => Object.keys(s.labels).length === 0) : undefined;
    if (!series) throw new Error(`/metrics has no histogram ${name}`);
    return { buckets: series.buckets, sum: series.sum, count: series.count };
  };
  const peers = byName.get(ETCD_METRICS.peerRoundTrip);
  const peerRoundTrip: Record<MemberId, HistogramScrape> = {};
  // etcd labels each peer's series To=<member id in hex>, as member ids are carried here.
  for (const series of peers?.type === 'histogram' ? histogramsOf(peers) : []) {
    const to = series.labels.To;
    if (to !== undefined) peerRoundTrip[to] = { buckets: series.buckets, sum: series.sum, count: series.count };
  }
  const startTime = valueOf(ETCD_METRICS.processStartTime);
  return {
    memberId,
    at,
    isLeader: required(ETCD_METRICS.isLeader) === 1,
    hasLeader: required(ETCD_METRICS.hasLeader) === 1,
    walFsync: histogram(ETCD_METRICS.walFsync),
    backendCommit: histogram(ETCD_METRICS.backendCommit),
    heartbeatSendFailures: required(ETCD_METRICS.heartbeatSendFailures),
    slowApplies: required(ETCD_METRICS.slowApplies),
    leaderChangesSeen: required(ETCD_METRICS.leaderChangesSeen),
    proposalsCommitted: required(ETCD_METRICS.proposalsCommitted),
    proposalsApplied: required(ETCD_METRICS.proposalsApplied),
    peerRoundTrip,
    alarms: status.alarms,
    raftTerm: status.raftTerm,
    raftIndex: status.raftIndex,
    raftAppliedIndex: status.raftAppliedIndex,
    leaderId: status.leaderId,
    ...(startTime === undefined ? {} : { processStartTime: startTime }),
  };
}
