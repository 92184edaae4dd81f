// What leader hygiene reads of one member, once: the figures its /metrics and its maintenance
// Status gave at one scrape (member-metrics adapter), and what two scrapes an interval apart make
// of them (the rates, means and p99s of that interval). Pure data; the policy is leader-hygiene.ts.
import type { MemberId } from '../common/index.ts';

/** A Prometheus histogram as scraped: cumulative bucket counts by upper bound (seconds), its sum and count. */
export interface HistogramScrape {
  /** [upper bound in seconds, cumulative count], ascending, ending with +Inf. */
  buckets: readonly (readonly [number, number])[];
  sum: number;
  count: number;
}

/** One member's figures at one scrape, raw (counters since the member started). */
export interface MemberScrape {
  memberId: MemberId;
  /** Epoch ms of the scrape. */
  at: number;
  isLeader: boolean;
  hasLeader: boolean;
  walFsync: HistogramScrape;
  backendCommit: HistogramScrape;
  /** etcd_server_heartbeat_send_failures_total (leader only moves it). */
  heartbeatSendFailures: number;
  /** etcd_server_slow_apply_total. */
  slowApplies: number;
  /** etcd_server_leader_changes_seen_total. */
  leaderChangesSeen: number;
  /** etcd_server_proposals_committed_total and _applied_total: a lasting gap means overload. */
  proposalsCommitted: number;
  proposalsApplied: number;
  /** etcd_network_peer_round_trip_time_seconds by peer (the label `To`). */
  peerRoundTrip: Readonly<Record<MemberId, HistogramScrape>>;
  /** Alarms the member reports (NOSPACE, CORRUPT), from its Status. */
  alarms: readonly string[];
  /** From the maintenance Status: the raft term, committed and applied index. */
  raftTerm: number;
  raftIndex: number;
  raftAppliedIndex: number;
  /** The leader its Status named ('0' for none); absent where the scrape could not ask. */
  leaderId?: MemberId;
  /**
   * process_start_time_seconds (epoch seconds): a later start is a restart even when every
   * counter has since passed its old value, which counters alone cannot tell.
   */
  processStartTime?: number;
  /**
   * How long the member took to answer the whole scrape (/metrics and Status), in ms: a process
   * starved of CPU answers late whatever its counters say, which compares across members where
   * leader-only counters (heartbeat send failures) cannot.
   */
  answerMs?: number;
}

/** What one member's two scrapes an interval apart say of that interval (deltas; a counter reset reads as a restart). */
export interface MemberSignals {
  memberId: MemberId;
  /** The later scrape's time, and the interval's length. */
  at: number;
  intervalMs: number;
  isLeader: boolean;
  /** etcd_server_has_leader at the later scrape; left out, read as true (one leader and one term everywhere are still required). */
  hasLeader?: boolean;
  /**
   * p99 and mean (Δsum/Δcount) of the interval, in seconds; undefined when no observation fell in
   * it; NaN when the scrape's counts or sum were no finite numbers: unknown, never a figure.
   */
  walFsyncP99?: number;
  walFsyncMean?: number;
  backendCommitP99?: number;
  backendCommitMean?: number;
  heartbeatSendFailures: number;
  slowApplies: number;
  leaderChanges: number;
  /** Committed minus applied at the later scrape. */
  applyLag: number;
  /** The worst p99 peer round trip of the interval, in seconds, over the peers seen. */
  peerRoundTripP99?: number;
  /** The p99 round trip of the interval to each peer it was observed to (etcd probes each every few seconds), in seconds. */
  peerRoundTripP99By?: Readonly<Record<MemberId, number>>;
  alarms: readonly string[];
  raftTerm: number;
  raftIndex: number;
  raftAppliedIndex: number;
  /** The leader the later scrape's Status named, when it had one. */
  leaderId?: MemberId;
  /** How long the later scrape took to be answered, in ms (MemberScrape.answerMs). */
  answerMs?: number;
  /** A counter went down between the scrapes (or the process started later): the member restarted, and the deltas count from zero. */
  restarted: boolean;
}
