// Leader-hygiene records for the store tests: a small one carrying what a careless codec would
// lose, and one as large as a real cluster keeps (5 members, 25 samples each, every member's last
// scrape with its histograms, 3 peers each, four moves).
import type { HygieneMoveRecord, HygieneRecord } from '../../functions/core/hygiene/hygiene-record.ts';
import type { HistogramScrape, MemberScrape, MemberSignals } from '../../functions/core/hygiene/hygiene-signals.ts';

/** etcd's histogram bounds (seconds) for wal_fsync and backend_commit: 16 buckets with +Inf. */
const BOUNDS = [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384, Infinity];

function histogram(seed: number): HistogramScrape {
  let cumulative = 0;
  const buckets = BOUNDS.map((bound, i) => {
    cumulative += Math.round(1_000_000 / (i + 1) + seed);
    return [bound, cumulative] as const;
  });
  return { buckets, sum: 1234.5678 + seed / 7, count: cumulative };
}

export const memberIds = ['8e9e05c52164694d', '91bc3c398fb3c146', 'fd422379fda50e48', 'a7c4b1e2d3f40516', '3c2b1a0f9e8d7c6b'];

function scrape(memberId: string, index: number): MemberScrape {
  const peers = memberIds.filter((id) => id !== memberId).slice(0, 3);
  return {
    memberId,
    at: 1_767_225_600_000 + index,
    isLeader: index === 0,
    hasLeader: true,
    walFsync: histogram(index),
    backendCommit: histogram(index + 10),
    heartbeatSendFailures: 3,
    slowApplies: 17,
    leaderChangesSeen: 4,
    proposalsCommitted: 987_654_321,
    proposalsApplied: 987_654_300,
    peerRoundTrip: Object.fromEntries(peers.map((peer, p) => [peer, histogram(index * 3 + p)])),
    alarms: [],
    raftTerm: 42,
    raftIndex: 987_654_400,
    raftAppliedIndex: 987_654_390,
    leaderId: memberIds[0]!,
    processStartTime: 1_767_000_000.123,
  };
}

function signals(memberId: string, index: number, minute: number): MemberSignals {
  return {
    memberId,
    at: 1_767_225_600_000 + minute * 60_000,
    intervalMs: 60_000,
    isLeader: index === 0,
    hasLeader: true,
    walFsyncP99: 0.0123 + minute / 100_000,
    walFsyncMean: 0.00234567,
    backendCommitP99: 0.0456789,
    backendCommitMean: 0.00987654,
    heartbeatSendFailures: minute % 3,
    slowApplies: 0,
    leaderChanges: 0,
    applyLag: 12,
    peerRoundTripP99: 0.00345678,
    alarms: minute === 7 ? ['NOSPACE'] : [],
    raftTerm: 42,
    raftIndex: 987_654_400 + minute,
    raftAppliedIndex: 987_654_390 + minute,
    leaderId: memberIds[0]!,
    restarted: false,
  };
}

const move = (n: number, state: HygieneMoveRecord['state']): HygieneMoveRecord => ({
  moveId: `move-${n}-${'0'.repeat(24)}`,
  at: 1_767_225_600_000 + n * 3_600_000,
  from: memberIds[0]!,
  to: memberIds[1 + (n % 4)]!,
  state,
  term: 40 + n,
  claimedAt: 1_767_225_600_000 + n * 3_600_000 + 1_500,
  endedAt: 1_767_225_600_000 + n * 3_600_000 + 3_250,
  newTerm: 41 + n,
  tookMs: 1_750,
  message: `leadership moved from ${memberIds[0]} to ${memberIds[1 + (n % 4)]}: its wal fsync p99 was 0.2345 s for 5 minutes`,
});

/** Small, and holding what must survive exactly: a float, a hex member id, an empty samples list and map. */
export function tinyHygieneRecord(note = 0): HygieneRecord {
  return {
    lastScrapes: { '8e9e05c52164694d': scrape('8e9e05c52164694d', note) },
    samples: { '8e9e05c52164694d': [signals('8e9e05c52164694d', 0, note)], '91bc3c398fb3c146': [] },
    moves: [move(note, 'asked')],
    lastJudged: { at: 1_767_225_600_000, kind: 'healthy', reason: 'LEADER_HEALTHY', message: `wal fsync p99 0.0123 s (${note})` },
  };
}

/** The record of a 5-member cluster an hour into its checks. */
export function realisticHygieneRecord(): HygieneRecord {
  return {
    lastScrapes: Object.fromEntries(memberIds.map((id, i) => [id, scrape(id, i)])),
    samples: Object.fromEntries(memberIds.map((id, i) => [id, Array.from({ length: 25 }, (_, minute) => signals(id, i, minute))])),
    moves: [move(1, 'moved'), move(2, 'superseded'), move(3, 'failed'), move(4, 'moving')],
    lastJudged: {
      at: 1_767_225_600_000,
      kind: 'holding',
      reason: 'LEADER_DEGRADED',
      message: 'the leader 8e9e05c52164694d has been slow for 3 of the 5 minutes the policy asks',
    },
  };
}
