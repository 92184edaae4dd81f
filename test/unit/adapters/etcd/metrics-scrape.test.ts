// A member's parsed /metrics and Status to a scrape: what hygiene needs read by name, a missing one refused.
import { describe, expect, it } from 'vitest';
import { metricsUrlOf } from '../../../../functions/adapters/etcd/member-metrics.ts';
import { scrapeOf } from '../../../../functions/adapters/etcd/metrics-scrape.ts';
import type { MemberStatus } from '../../../../functions/core/common/types.ts';
import { parsePrometheusText } from '../../../../functions/lib/prometheus-text.ts';

const STATUS: MemberStatus = {
  leaderId: 'b2',
  raftTerm: 3,
  raftIndex: 90,
  raftAppliedIndex: 88,
  alarms: ['NOSPACE'],
  errors: [],
  version: '3.4.23',
  dbSize: 1,
  isLearner: false,
};

const histogram = (name: string, labels = '') => [
  `# TYPE ${name} histogram`,
  `${name}_bucket{${labels}le="0.001"} 2`,
  `${name}_bucket{${labels}le="+Inf"} 3`,
  `${name}_sum{${labels.replace(/,$/, '')}} 0.01`,
  `${name}_count{${labels.replace(/,$/, '')}} 3`,
];

const TEXT = [
  'etcd_server_is_leader 0',
  'etcd_server_has_leader 1',
  ...histogram('etcd_disk_wal_fsync_duration_seconds'),
  ...histogram('etcd_disk_backend_commit_duration_seconds'),
  '# TYPE etcd_server_heartbeat_send_failures_total counter',
  'etcd_server_heartbeat_send_failures_total 4',
  'etcd_server_slow_apply_total 5',
  'etcd_server_leader_changes_seen_total 6',
  'etcd_server_proposals_committed_total 90',
  'etcd_server_proposals_applied_total 88',
  '# TYPE etcd_network_peer_round_trip_time_seconds histogram',
  'etcd_network_peer_round_trip_time_seconds_bucket{To="b2",le="0.0001"} 1',
  'etcd_network_peer_round_trip_time_seconds_bucket{To="b2",le="+Inf"} 1',
  'etcd_network_peer_round_trip_time_seconds_sum{To="b2"} 0.00005',
  'etcd_network_peer_round_trip_time_seconds_count{To="b2"} 1',
  'process_start_time_seconds 1.7e9',
].join('\n');

describe('scrapeOf', () => {
  it('reads the figures hygiene needs, peers by their To label, the Status beside them', () => {
    const scrape = scrapeOf('a1', 5, parsePrometheusText(TEXT), STATUS);
    expect(scrape).toMatchObject({
      memberId: 'a1',
      at: 5,
      isLeader: false,
      hasLeader: true,
      heartbeatSendFailures: 4,
      slowApplies: 5,
      leaderChangesSeen: 6,
      proposalsCommitted: 90,
      proposalsApplied: 88,
    });
    expect(scrape).toMatchObject({ alarms: ['NOSPACE'], raftTerm: 3, raftIndex: 90, raftAppliedIndex: 88, leaderId: 'b2', processStartTime: 1.7e9 });
    expect(scrape.walFsync).toEqual({
      buckets: [
        [0.001, 2],
        [Infinity, 3],
      ],
      sum: 0.01,
      count: 3,
    });
    expect(Object.keys(scrape.peerRoundTrip)).toEqual(['b2']);
  });

  it('refuses a text without a figure it needs, by name, rather than read it as 0', () => {
    const without = (name: string) =>
      TEXT.split('\n')
        .filter((line) => !line.includes(name))
        .join('\n');
    expect(() => scrapeOf('a1', 5, parsePrometheusText(without('etcd_server_slow_apply_total')), STATUS)).toThrow(
      '/metrics has no etcd_server_slow_apply_total',
    );
    expect(() => scrapeOf('a1', 5, parsePrometheusText(without('etcd_disk_wal_fsync')), STATUS)).toThrow(
      '/metrics has no histogram etcd_disk_wal_fsync_duration_seconds',
    );
  });
});

describe('metricsUrlOf', () => {
  it('appends /metrics to a base URL, and keeps a path given', () => {
    expect(metricsUrlOf('http://127.0.0.1:2381')).toBe('http://127.0.0.1:2381/metrics');
    expect(metricsUrlOf('https://10.0.0.1:2379/')).toBe('https://10.0.0.1:2379/metrics');
    expect(metricsUrlOf('http://127.0.0.1:2381/metrics')).toBe('http://127.0.0.1:2381/metrics');
  });
});
