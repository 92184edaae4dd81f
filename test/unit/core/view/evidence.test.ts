import { describe, it, expect } from 'vitest';
import { judgeLeader, type LeaderVerdict } from '../../../../functions/core/view/evidence.ts';
import type { ClusterView } from '../../../../functions/core/view/view.ts';
import { cluster, id, view } from '../fixtures.ts';

const ET = 1_000;
const down = { paths: 'refused' as const };
/** etcd-0 leads at `term`, unreachable from us; etcd-1 and etcd-2 agree. */
const deadLeader = (at: number, term = 2): ClusterView => cluster(at, 3, { leader: 0, term, override: { 0: down } });
const aliveLeader = (at: number, term = 2): ClusterView => cluster(at, 3, { leader: 0, term });

interface Row {
  name: string;
  samples: ClusterView[];
  target?: number;
  verdict: LeaderVerdict;
  leader?: number;
  term?: number;
  since?: number;
  leaderChanged?: boolean;
  says?: RegExp;
  /** The election timeout the rule is given; ET unless said. */
  et?: number;
}

const rows: Row[] = [
  { name: 'no sample at all', samples: [], verdict: 'CLUSTER_UNREACHABLE' },
  {
    name: 'no member answers',
    samples: [cluster(0, 3, { override: { 0: down, 1: { paths: 'timeout' }, 2: { paths: 'tls' } } })],
    verdict: 'CLUSTER_UNREACHABLE',
    says: /No member .* direct http:\/\/127\.0\.0\.1:4001 refused/,
  },
  {
    name: 'the members agree on another leader',
    samples: [cluster(0, 3, { leader: 1, term: 4 })],
    verdict: 'TARGET_NOT_LEADER',
    leader: 1,
    term: 4,
    leaderChanged: false,
    says: /etcd-0 .* is not the leader.*etcd-1/,
  },
  {
    name: 'the target led in an earlier sample',
    samples: [aliveLeader(0), cluster(500, 3, { leader: 1, term: 3 })],
    verdict: 'TARGET_NOT_LEADER',
    leader: 1,
    leaderChanged: true,
    says: /Leadership moved from etcd-0 .* to etcd-1/,
  },
  {
    name: 'the target is unreachable and the followers agree on another leader',
    samples: [cluster(0, 3, { leader: 2, override: { 0: down } })],
    verdict: 'TARGET_NOT_LEADER',
    leader: 2,
  },
  {
    name: "the target's own word, while another member has lost the leader",
    samples: [cluster(0, 3, { leader: 1, override: { 2: { leader: 'none' } } })],
    verdict: 'TARGET_NOT_LEADER',
    leader: 1,
  },
  {
    name: 'the target leads and answers',
    samples: [aliveLeader(0, 7)],
    verdict: 'LEADER_REACHABLE',
    leader: 0,
    term: 7,
    says: /answers on direct http:\/\/127\.0\.0\.1:4001/,
  },
  {
    name: 'the target leads and answers on exec only',
    samples: [cluster(0, 3, { override: { 0: { paths: { direct: 'refused', 'port-forward': 'timeout', 'exec-relay': 'ok' } } } })],
    verdict: 'LEADER_REACHABLE',
    says: /answers on exec-relay exec-relay:\/\/etcd-0/,
  },
  {
    name: 'the followers report no leader',
    samples: [cluster(0, 3, { leader: 'none', override: { 0: down } })],
    verdict: 'ELECTION_IN_PROGRESS',
    says: /no leader/,
  },
  {
    name: 'the followers disagree',
    samples: [cluster(0, 3, { override: { 0: down, 1: { leader: 0 }, 2: { leader: 2 } } })],
    verdict: 'ELECTION_IN_PROGRESS',
    says: /disagree.*etcd-1 .* sees etcd-0.*etcd-2 .* sees etcd-2/,
  },
  {
    name: 'the followers name the target at different terms',
    samples: [cluster(0, 3, { override: { 0: down, 1: { term: 3 } } })],
    verdict: 'ELECTION_IN_PROGRESS',
    says: /terms 2, 3/,
  },
  {
    name: 'the term moved since the previous sample',
    samples: [deadLeader(0, 2), deadLeader(2_000, 3)],
    verdict: 'ELECTION_IN_PROGRESS',
    term: 3,
    says: /term is moving/,
  },
  {
    name: 'one sample: not yet confirmed',
    samples: [deadLeader(0)],
    verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
    leader: 0,
    since: 0,
    says: /etcd-1 .* and etcd-2 .* name etcd-0 .* leader at term 2 and every path to it fails \(direct http:\/\/127\.0\.0\.1:4001 refused/,
  },
  {
    name: 'two samples closer than one election timeout',
    samples: [deadLeader(0), deadLeader(ET - 1)],
    verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
    since: 0,
  },
  {
    name: 'two samples one election timeout apart',
    samples: [deadLeader(0), deadLeader(ET)],
    verdict: 'LEADER_UNREACHABLE',
    leader: 0,
    term: 2,
    since: 0,
    says: /etcd-0 \(8e9e05c52164694d\) is the leader by the word of etcd-1 .* and etcd-2 .* at term 2 for 1 s, and every path to it fails: direct http:\/\/127\.0\.0\.1:4001 refused/,
  },
  // Two samples at least one election timeout apart, whatever the policy says: never one probe.
  {
    name: 'one sample with an election timeout of 0 still needs a second',
    samples: [deadLeader(0)],
    et: 0,
    verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
    since: 0,
    says: /but not yet across one election timeout \(100 ms\)/,
  },
  {
    name: 'two samples 21 ms apart with an election timeout of 0',
    samples: [deadLeader(0), deadLeader(21)],
    et: 0,
    verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
  },
  {
    name: 'two samples at the same instant',
    samples: [deadLeader(5_000), deadLeader(5_000)],
    et: 0,
    verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
  },
  {
    name: 'two samples 100 ms apart with an election timeout of 0: the floor',
    samples: [deadLeader(0), deadLeader(100)],
    et: 0,
    verdict: 'LEADER_UNREACHABLE',
  },
  {
    name: 'the streak starts after the target was last seen alive',
    samples: [aliveLeader(0), deadLeader(1_000), deadLeader(1_600), deadLeader(2_300)],
    verdict: 'LEADER_UNREACHABLE',
    since: 1_000,
  },
  {
    name: 'a term change restarts the streak',
    samples: [deadLeader(0, 2), deadLeader(1_500, 3), deadLeader(2_000, 3)],
    verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
    term: 3,
    since: 1_500,
  },
  {
    name: 'a sample without agreement breaks the streak',
    samples: [deadLeader(0), cluster(800, 3, { leader: 'none', override: { 0: down } }), deadLeader(1_200), deadLeader(2_000)],
    verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
    since: 1_200,
  },
  {
    name: 'samples out of order are put in order',
    samples: [deadLeader(ET), deadLeader(0)],
    verdict: 'LEADER_UNREACHABLE',
    since: 0,
  },
  {
    name: 'timeouts on every path count as down',
    samples: [
      cluster(0, 3, { override: { 0: { paths: { direct: 'timeout', 'exec-relay': 'refused' } } } }),
      cluster(ET, 3, { override: { 0: { paths: { direct: 'timeout', 'exec-relay': 'refused' } } } }),
    ],
    verdict: 'LEADER_UNREACHABLE',
    since: 0,
  },
  {
    name: 'a TLS failure on one path proves nothing',
    samples: [
      cluster(0, 3, { override: { 0: { paths: { direct: 'refused', 'exec-relay': 'tls' } } } }),
      cluster(5 * ET, 3, { override: { 0: { paths: { direct: 'refused', 'exec-relay': 'tls' } } } }),
    ],
    verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
    says: /does not prove it is down/,
  },
];

describe('judgeLeader', () => {
  it.each(rows)('$name → $verdict', (row) => {
    const j = judgeLeader(row.samples, id(row.target ?? 0), row.et ?? ET);
    expect(j.verdict).toBe(row.verdict);
    if (row.leader !== undefined) expect(j.leaderId).toBe(id(row.leader));
    if (row.term !== undefined) expect(j.term).toBe(row.term);
    if (row.since !== undefined) expect(j.since).toBe(row.since);
    if (row.leaderChanged !== undefined) expect(j.leaderChanged).toBe(row.leaderChanged);
    if (row.says) expect(j.message).toMatch(row.says);
    expect(j.message).toMatch(/\.$/);
  });

  it("returns the target's paths from the current sample", () => {
    const j = judgeLeader([aliveLeader(0), deadLeader(ET)], id(0), ET);
    expect(j.paths).toEqual([expect.objectContaining({ path: 'direct', reachability: 'refused' })]);
  });

  it('a mixed-path streak sets no since', () => {
    const v = view(0, [
      { i: 0, paths: { direct: 'refused', 'exec-relay': 'auth' } },
      { i: 1, leader: 0 },
      { i: 2, leader: 0 },
    ]);
    expect(judgeLeader([v], id(0), ET).since).toBeUndefined();
  });
});

describe('a streak carried from views no longer kept', () => {
  const target = id(0);

  it('keeps the grace window from the carried start when the kept samples all show the streak', () => {
    const j = judgeLeader([deadLeader(50_000), deadLeader(51_000)], target, ET, { since: 10_000, term: 2 });
    expect(j.verdict).toBe('LEADER_UNREACHABLE');
    expect(j.since).toBe(10_000);
  });

  it('confirms at once when the carried start is an election timeout back, even with one sample kept', () => {
    const j = judgeLeader([deadLeader(50_000)], target, ET, { since: 10_000, term: 2 });
    expect(j.verdict).toBe('LEADER_UNREACHABLE');
    expect(j.since).toBe(10_000);
  });

  it('never confirms from one sample whose carried start is itself', () => {
    const j = judgeLeader([deadLeader(50_000)], target, 0, { since: 50_000, term: 2 });
    expect(j.verdict).toBe('LEADER_UNREACHABLE_UNCONFIRMED');
  });

  it('ignores a carried streak at another term: a new leadership is a new streak', () => {
    const j = judgeLeader([deadLeader(50_000, 3), deadLeader(51_000, 3)], target, ET, { since: 10_000, term: 2 });
    expect(j.since).toBe(50_000);
  });

  it('ignores a carried streak when a kept sample broke it', () => {
    const j = judgeLeader([aliveLeader(49_000), deadLeader(50_000), deadLeader(51_000)], target, ET, { since: 10_000, term: 2 });
    expect(j.since).toBe(50_000);
  });
});
