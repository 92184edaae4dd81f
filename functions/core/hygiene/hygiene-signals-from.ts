// What two scrapes of one member an interval apart say of that interval: the deltas of its
// counters, the means (Δsum/Δcount) and p99s (from Δbuckets) of its latency histograms. Pure.
// A member that restarted in between (a counter went down, or its process started later) has
// every delta counted from zero, as Prometheus' increase() treats a reset; a peer's series that
// fell alone (the peer removed and added again) is counted from zero alone.
import type { HistogramScrape, MemberScrape, MemberSignals } from './hygiene-signals.ts';

type Buckets = HistogramScrape['buckets'];

/**
 * The q-quantile of cumulative buckets as Prometheus' histogram_quantile computes it: the bucket
 * the rank falls in, interpolated linearly between its bounds (the first bucket starting at 0);
 * a rank in the +Inf bucket gives the highest finite bound. Undefined when nothing was observed;
 * NaN, unknown, when a count is not a finite number or the counts fall as the bound rises: such
 * counts compare false with every rank, and would read as the highest bound.
 */
export function quantileOf(q: number, buckets: Buckets): number | undefined {
  if (buckets.some(([, count], i) => !Number.isFinite(count) || count < (buckets[i - 1]?.[1] ?? 0))) return NaN;
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total <= 0 || buckets.length < 2) return undefined;
  const rank = q * total;
  const b = buckets.findIndex(([, count], i) => i < buckets.length - 1 && count >= rank);
  if (b === -1) return buckets[buckets.length - 2]![0];
  const [end, cumulative] = buckets[b]!;
  if (b === 0 && end <= 0) return end;
  const [start, before] = b === 0 ? [0, 0] : buckets[b - 1]!;
  return start + (end - start) * ((rank - before) / (cumulative - before));
}

/** Whether any count of `later` is below the same bound's in `earlier`, or the bounds differ. */
function histogramFell(earlier: HistogramScrape, later: HistogramScrape): boolean {
  if (later.count < earlier.count || later.sum < earlier.sum) return true;
  if (earlier.buckets.length !== later.buckets.length) return true;
  return later.buckets.some(([bound, count], i) => earlier.buckets[i]![0] !== bound || count < earlier.buckets[i]![1]);
}

const ZERO: HistogramScrape = { buckets: [], sum: 0, count: 0 };

/** The interval's histogram: later minus earlier, bucket by bucket (earlier ZERO after a reset). */
function histogramDelta(earlier: HistogramScrape, later: HistogramScrape): HistogramScrape {
  if (earlier === ZERO) return later;
  return {
    buckets: later.buckets.map(([bound, count], i) => [bound, count - earlier.buckets[i]![1]] as const),
    sum: later.sum - earlier.sum,
    count: later.count - earlier.count,
  };
}

const p99Of = (h: HistogramScrape): number | undefined => quantileOf(0.99, h.buckets);
/** NaN (unknown) when the sum or count is not a finite number: a NaN count is not "nothing observed". */
const meanOf = (h: HistogramScrape): number | undefined =>
  !Number.isFinite(h.count) || !Number.isFinite(h.sum) ? NaN : h.count > 0 ? h.sum / h.count : undefined;

function memberRestarted(earlier: MemberScrape, later: MemberScrape): boolean {
  if (earlier.processStartTime !== undefined && later.processStartTime !== undefined && later.processStartTime > earlier.processStartTime) return true;
  const counters = (s: MemberScrape) => [s.heartbeatSendFailures, s.slowApplies, s.leaderChangesSeen];
  const before = counters(earlier);
  return (
    counters(later).some((value, i) => value < before[i]!) ||
    histogramFell(earlier.walFsync, later.walFsync) ||
    histogramFell(earlier.backendCommit, later.backendCommit)
  );
}

export function signalsBetween(earlier: MemberScrape, later: MemberScrape): MemberSignals {
  if (earlier.memberId !== later.memberId) throw new Error(`memberId: the scrapes are of ${earlier.memberId} and ${later.memberId}, not of one member`);
  if (!(later.at > earlier.at)) throw new Error(`at: the later scrape (${later.at}) is not after the earlier (${earlier.at})`);
  const restarted = memberRestarted(earlier, later);
  const from = (pick: (s: MemberScrape) => number): number => pick(later) - (restarted ? 0 : pick(earlier));
  const delta = (pick: (s: MemberScrape) => HistogramScrape): HistogramScrape => histogramDelta(restarted ? ZERO : pick(earlier), pick(later));
  const walFsync = delta((s) => s.walFsync);
  const backendCommit = delta((s) => s.backendCommit);
  const peerP99s = Object.entries(later.peerRoundTrip).flatMap(([peer, now]) => {
    const then = restarted ? undefined : earlier.peerRoundTrip[peer];
    const p99 = p99Of(histogramDelta(then === undefined || histogramFell(then, now) ? ZERO : then, now));
    return p99 === undefined ? [] : [[peer, p99] as const];
  });
  const optional = <K extends string>(key: K, value: number | undefined) => (value === undefined ? {} : ({ [key]: value } as Record<K, number>));
  return {
    memberId: later.memberId,
    at: later.at,
    intervalMs: later.at - earlier.at,
    isLeader: later.isLeader,
    ...optional('walFsyncP99', p99Of(walFsync)),
    ...optional('walFsyncMean', meanOf(walFsync)),
    ...optional('backendCommitP99', p99Of(backendCommit)),
    ...optional('backendCommitMean', meanOf(backendCommit)),
    heartbeatSendFailures: from((s) => s.heartbeatSendFailures),
    slowApplies: from((s) => s.slowApplies),
    leaderChanges: from((s) => s.leaderChangesSeen),
    // Gauges of the commit and apply index, read at one instant each: never below zero.
    applyLag: Math.max(0, later.proposalsCommitted - later.proposalsApplied),
    ...optional('peerRoundTripP99', peerP99s.length === 0 ? undefined : Math.max(...peerP99s.map(([, p99]) => p99))),
    ...(peerP99s.length === 0 ? {} : { peerRoundTripP99By: Object.fromEntries(peerP99s) }),
    alarms: later.alarms,
    raftTerm: later.raftTerm,
    raftIndex: later.raftIndex,
    raftAppliedIndex: later.raftAppliedIndex,
    ...(later.leaderId === undefined ? {} : { leaderId: later.leaderId }),
    ...optional('answerMs', later.answerMs),
    restarted,
  };
}
