// What two scrapes of one member an interval apart say: hand-made scrapes, resets and empty intervals.
import { describe, expect, it } from 'vitest';
import type { HistogramScrape, MemberScrape } from '../../../../functions/core/hygiene/hygiene-signals.ts';
import { quantileOf, signalsBetween } from '../../../../functions/core/hygiene/hygiene-signals-from.ts';

const BOUNDS = [0.001, 0.002, 0.004, 0.008, Infinity];

/** A histogram from per-bucket (not cumulative) counts over BOUNDS, and its sum. */
function histogram(perBucket: number[], sum: number): HistogramScrape {
  let running = 0;
  const buckets = BOUNDS.map((bound, i) => [bound, (running += perBucket[i] ?? 0)] as const);
  return { buckets, sum, count: running };
}

const EMPTY = histogram([], 0);

function scrape(overrides: Partial<MemberScrape> = {}): MemberScrape {
  return {
    memberId: 'a1',
    at: 10_000,
    isLeader: false,
    hasLeader: true,
    walFsync: EMPTY,
    backendCommit: EMPTY,
    heartbeatSendFailures: 0,
    slowApplies: 0,
    leaderChangesSeen: 1,
    proposalsCommitted: 100,
    proposalsApplied: 100,
    peerRoundTrip: {},
    alarms: [],
    raftTerm: 2,
    raftIndex: 100,
    raftAppliedIndex: 100,
    ...overrides,
  };
}

describe('quantileOf', () => {
  it('interpolates linearly inside the bucket, as histogram_quantile does', () => {
    // 100 observations: 50 in (0,1ms], 50 in (1ms,2ms]. Rank 99 is 49/50 into the second bucket.
    expect(quantileOf(0.99, histogram([50, 50], 0).buckets)).toBeCloseTo(0.001 + 0.001 * (49 / 50), 12);
    // The first bucket starts at 0.
    expect(quantileOf(0.5, histogram([10], 0).buckets)).toBeCloseTo(0.0005, 12);
  });

  it('gives the highest finite bound when the rank falls in +Inf, and undefined for no observation', () => {
    expect(quantileOf(0.99, histogram([1, 0, 0, 0, 99], 0).buckets)).toBe(0.008);
    expect(quantileOf(0.99, EMPTY.buckets)).toBeUndefined();
  });
});

describe('quantileOf on counts that are no numbers', () => {
  // Compared with a rank, NaN is false everywhere: read on, it gave the highest finite bound, 8 ms here.
  it.each([
    {
      row: 'a NaN count',
      buckets: [
        [0.001, 1],
        [0.002, NaN],
        [Infinity, 2],
      ],
    },
    {
      row: 'a NaN total',
      buckets: [
        [0.001, 1],
        [Infinity, NaN],
      ],
    },
    {
      row: 'an infinite count',
      buckets: [
        [0.001, Infinity],
        [Infinity, Infinity],
      ],
    },
    {
      row: 'counts that fall as the bound rises',
      buckets: [
        [0.001, 5],
        [0.008, 3],
        [Infinity, 5],
      ],
    },
  ] satisfies { row: string; buckets: [number, number][] }[])('$row: NaN, unknown, not a bound', ({ buckets }) => {
    expect(quantileOf(0.99, buckets)).toBeNaN();
  });
});

describe('signalsBetween', () => {
  it('a NaN sum (a NaN observed): the mean is NaN, unknown, not "no observation"; the p99 from sound buckets stands', () => {
    const later = scrape({ at: 70_000, walFsync: { ...histogram([100], 0.05), sum: NaN } });
    const signals = signalsBetween(scrape({ walFsync: histogram([50], 0.02) }), later);
    expect(signals.walFsyncMean).toBeNaN();
    expect(signals.walFsyncP99).toBeCloseTo(0.00099, 6);
  });

  it('reads the interval: means from Δsum/Δcount, p99 from Δbuckets, counter deltas, apply lag and the worst peer p99', () => {
    const earlier = scrape({
      walFsync: histogram([100], 0.05),
      backendCommit: histogram([0, 10], 0.015),
      heartbeatSendFailures: 2,
      slowApplies: 1,
      peerRoundTrip: { b2: histogram([5], 0.001), c3: histogram([5], 0.001) },
    });
    const later = scrape({
      at: 70_000,
      isLeader: true,
      // 100 more fsyncs, all in (2ms,4ms], 0.3 s more in all.
      walFsync: histogram([100, 0, 100], 0.35),
      backendCommit: histogram([0, 10, 0, 4], 0.045),
      heartbeatSendFailures: 5,
      slowApplies: 1,
      leaderChangesSeen: 2,
      proposalsCommitted: 180,
      proposalsApplied: 170,
      peerRoundTrip: { b2: histogram([15], 0.002), c3: histogram([5, 0, 0, 10], 0.05) },
      alarms: ['NOSPACE'],
      raftTerm: 3,
      raftIndex: 180,
      raftAppliedIndex: 170,
    });
    const signals = signalsBetween(earlier, later);
    expect(signals).toMatchObject({
      memberId: 'a1',
      at: 70_000,
      intervalMs: 60_000,
      isLeader: true,
      heartbeatSendFailures: 3,
      slowApplies: 0,
      leaderChanges: 1,
      applyLag: 10,
      alarms: ['NOSPACE'],
      raftTerm: 3,
      raftIndex: 180,
      raftAppliedIndex: 170,
      restarted: false,
    });
    expect(signals.walFsyncMean).toBeCloseTo(0.003, 12);
    expect(signals.walFsyncP99).toBeCloseTo(0.002 + 0.002 * 0.99, 12);
    expect(signals.backendCommitMean).toBeCloseTo(0.0075, 12);
    expect(signals.backendCommitP99).toBeCloseTo(0.004 + 0.004 * ((0.99 * 4) / 4), 12);
    // c3's 10 new round trips all fell in (4ms,8ms]: worse than b2's, all under 1ms.
    expect(signals.peerRoundTripP99).toBeCloseTo(0.004 + 0.004 * 0.99, 12);
  });

  it('leaves the means and p99s undefined for an interval in which nothing was observed', () => {
    const same = scrape({ walFsync: histogram([3], 0.002), peerRoundTrip: { b2: histogram([1], 0) } });
    const signals = signalsBetween(same, { ...same, at: 11_000 });
    expect(signals.walFsyncMean).toBeUndefined();
    expect(signals.walFsyncP99).toBeUndefined();
    expect(signals.backendCommitP99).toBeUndefined();
    expect(signals.peerRoundTripP99).toBeUndefined();
    expect(signals.heartbeatSendFailures).toBe(0);
    expect(signals.restarted).toBe(false);
  });

  it('reads a counter that went down as a restart: every delta counts from zero', () => {
    const earlier = scrape({ walFsync: histogram([500], 0.2), heartbeatSendFailures: 7, slowApplies: 3, leaderChangesSeen: 4 });
    const later = scrape({ at: 20_000, walFsync: histogram([0, 10], 0.015), heartbeatSendFailures: 1, slowApplies: 5, leaderChangesSeen: 1 });
    const signals = signalsBetween(earlier, later);
    expect(signals.restarted).toBe(true);
    expect(signals.heartbeatSendFailures).toBe(1);
    expect(signals.slowApplies).toBe(5);
    expect(signals.leaderChanges).toBe(1);
    expect(signals.walFsyncMean).toBeCloseTo(0.0015, 12);
    expect(signals.walFsyncP99).toBeCloseTo(0.001 + 0.001 * 0.99, 12);
  });

  it('reads a later process start time as a restart even when every counter has passed its old value', () => {
    const earlier = scrape({ processStartTime: 1_000, slowApplies: 1, walFsync: histogram([2], 0.001) });
    const later = scrape({ at: 20_000, processStartTime: 1_015, slowApplies: 4, walFsync: histogram([4], 0.002) });
    const signals = signalsBetween(earlier, later);
    expect(signals.restarted).toBe(true);
    expect(signals.slowApplies).toBe(4);
    expect(signals.walFsyncMean).toBeCloseTo(0.0005, 12);
  });

  it('counts a peer first seen in the later scrape, or whose series fell, from zero without calling the member restarted', () => {
    const earlier = scrape({ peerRoundTrip: { b2: histogram([0, 0, 0, 9], 0.05) } });
    const later = scrape({ at: 20_000, peerRoundTrip: { b2: histogram([2], 0.001), c3: histogram([0, 3], 0.005) } });
    const signals = signalsBetween(earlier, later);
    expect(signals.restarted).toBe(false);
    expect(signals.peerRoundTripP99).toBeCloseTo(0.001 + 0.001 * 0.99, 12);
  });

  it('clamps an apply lag read across two instants to zero', () => {
    expect(signalsBetween(scrape(), scrape({ at: 11_000, proposalsCommitted: 100, proposalsApplied: 101 })).applyLag).toBe(0);
  });

  it('carries the leader the later Status named', () => {
    expect(signalsBetween(scrape(), scrape({ at: 11_000, leaderId: 'b2' })).leaderId).toBe('b2');
  });

  it('refuses two scrapes of different members, or out of order, naming the field', () => {
    expect(() => signalsBetween(scrape(), scrape({ memberId: 'b2', at: 11_000 }))).toThrow(/memberId: the scrapes are of a1 and b2/);
    expect(() => signalsBetween(scrape({ at: 11_000 }), scrape({ at: 11_000 }))).toThrow(/at: the later scrape \(11000\) is not after the earlier \(11000\)/);
  });
});
