// The degradation rules of leader hygiene, per signal, over one member's samples (oldest first):
// each rule has an enter level and an exit level at half of it, so a dip below the enter level
// but above the exit keeps a breach, and a breach ends only once the signal stayed under its exit
// level for a window. Pure; leader-hygiene.ts decides what a breach means for the cluster.
import type { MemberSignals } from './hygiene-signals.ts';
import type { Policy } from '../policy/index.ts';
import { median as medianOf } from '../common/index.ts';

export type HygieneThresholds = Policy['hygiene']['thresholds'];

/**
 * etcd observes each peer's round trip (its prober's smoothed RTT, a probe every 4 s) once in 30 s
 * (rafthttp's statusMonitoringInterval), so most samples of a check a minute or less hold none.
 */
export const PEER_ROUND_TRIP_OBSERVED_EVERY_MS = 30_000;

/**
 * Where a member's latest round trips are looked for: the window, or back far enough to hold one
 * of etcd's observations when the window is shorter. A round trip is a level carried between
 * observations, as the rules carry it; looking only inside a short window would read it as unknown.
 */
export const roundTripsSince = (now: number, hygiene: Pick<Policy['hygiene'], 'windowMs' | 'checkEveryMs'>): number =>
  now - Math.max(hygiene.windowMs, PEER_ROUND_TRIP_OBSERVED_EVERY_MS + hygiene.checkEveryMs);

export type DegradationSignal = 'walFsyncP99' | 'backendCommitP99' | 'heartbeatFailures' | 'walFsyncOutlier' | 'backendCommitOutlier' | 'leaderRoundTrip';

/** A sample's standing on one rule: above the enter level, under the exit level, or between (or unknown: no observation). */
export type Level = 'enter' | 'between' | 'exit';

export interface Breach {
  signal: DegradationSignal;
  /** The start of the interval of the first sample above the enter level. */
  since: number;
  /** The latest sample's standing: 'exit' while it is recovering. */
  now: Level;
  /** The figure the latest sample had, and the worst the breach had (seconds, or a count of samples). */
  latest?: number;
  worst: number;
}

const level = (value: number | undefined, enter: number): Level =>
  value === undefined ? 'between' : value > enter ? 'enter' : value < enter / 2 ? 'exit' : 'between';

/** The members' p99 of one latency, for the outlier rule: the best follower at the same sample. */
type Latency = 'walFsync' | 'backendCommit';
const p99Of = (s: MemberSignals | undefined, latency: Latency): number | undefined => (latency === 'walFsync' ? s?.walFsyncP99 : s?.backendCommitP99);
const meanOf = (s: MemberSignals | undefined, latency: Latency): number | undefined => (latency === 'walFsync' ? s?.walFsyncMean : s?.backendCommitMean);

/** Each sample's figure and level on one rule, oldest first. */
type Reading = { at: number; start: number; value: number | undefined; level: Level };

/**
 * A sample that observed nothing (no fsync in the interval, no peer probe) is no news: it carries
 * the level of the last one that did, so a breach neither opens nor ends on it, and a quiet spell
 * cannot pass for a recovery.
 */
function carried(readings: Reading[]): Reading[] {
  let last: Reading | undefined;
  return readings.map((r) => {
    if (r.value !== undefined) return (last = r);
    return last ? { ...r, value: last.value, level: last.level } : { ...r, level: 'exit' };
  });
}

function levelReadings(samples: readonly MemberSignals[], latency: Latency, t: HygieneThresholds): Reading[] {
  const enter = (latency === 'walFsync' ? t.fsyncP99Ms : t.commitP99Ms) / 1_000;
  return carried(samples.map((s) => ({ at: s.at, start: s.at - s.intervalMs, value: p99Of(s, latency), level: level(p99Of(s, latency), enter) })));
}

/**
 * (b): heartbeat send failures rose in at least heartbeatFailureSamples of the last heartbeatSamples
 * samples, this one among them. A sample without failures is under the exit level whatever the
 * count behind it: the count would keep a recovered leader "degraded" for heartbeatSamples more
 * samples, long enough to move a leader that is well again.
 */
function heartbeatReadings(samples: readonly MemberSignals[], t: HygieneThresholds): Reading[] {
  return samples.map((s, i) => {
    const rises = samples.slice(Math.max(0, i - t.heartbeatSamples + 1), i + 1).filter((x) => x.heartbeatSendFailures > 0).length;
    const lvl: Level = s.heartbeatSendFailures === 0 ? 'exit' : rises >= t.heartbeatFailureSamples ? 'enter' : 'between';
    return { at: s.at, start: s.at - s.intervalMs, value: rises, level: lvl };
  });
}

/**
 * (c): the leader's p99 at least outlierFactor times the best follower's of the same poll (samples
 * are aligned from the newest), above the floor, and the means agreeing (the leader's at least
 * outlierMeanFactor times that follower's): coarse buckets can give two disks one p99. The value
 * is the ratio; it exits below half the factor or half the floor.
 */
function outlierReadings(
  leader: readonly MemberSignals[],
  followers: readonly (readonly MemberSignals[])[],
  latency: Latency,
  t: HygieneThresholds,
): Reading[] {
  const floor = (latency === 'walFsync' ? t.outlierFsyncP99Ms : t.outlierCommitP99Ms) / 1_000;
  return carried(
    leader.map((s, i): Reading => {
      const back = leader.length - 1 - i;
      const peers = followers.map((f) => f[f.length - 1 - back]).filter((f) => p99Of(f, latency) !== undefined);
      const best = peers.sort((a, b) => p99Of(a, latency)! - p99Of(b, latency)!)[0];
      const mine = p99Of(s, latency);
      const theirs = p99Of(best, latency);
      const base = { at: s.at, start: s.at - s.intervalMs };
      if (mine === undefined || theirs === undefined || theirs <= 0) return { ...base, value: undefined, level: 'between' };
      const ratio = mine / theirs;
      const myMean = meanOf(s, latency);
      const theirMean = meanOf(best, latency);
      const meansAgree = myMean !== undefined && theirMean !== undefined && myMean >= t.outlierMeanFactor * theirMean;
      if (ratio >= t.outlierFactor && mine > floor && meansAgree) return { ...base, value: ratio, level: 'enter' };
      return { ...base, value: ratio, level: ratio < t.outlierFactor / 2 || mine < floor / 2 ? 'exit' : 'between' };
    }),
  );
}

/** The median, or undefined for no values: a round trip nobody observed is unknown, not NaN. */
const median = (values: readonly number[]): number | undefined => (values.length === 0 ? undefined : medianOf(values));

/** The followers' round trips of one poll: to the leader, and to each other (the leader left out). */
function followerRoundTrips(leaderId: string, peers: readonly (MemberSignals | undefined)[]): { toLeader?: number; between?: number } {
  const toLeader = median(peers.flatMap((f) => (f?.peerRoundTripP99By?.[leaderId] === undefined ? [] : [f.peerRoundTripP99By[leaderId]])));
  const between = median(
    peers.flatMap((f) =>
      Object.entries(f?.peerRoundTripP99By ?? {})
        .filter(([id]) => id !== leaderId)
        .map(([, rtt]) => rtt),
    ),
  );
  return { ...(toLeader === undefined ? {} : { toLeader }), ...(between === undefined ? {} : { between }) };
}

/**
 * (d): the leader slow to reach: the followers' median p99 round trip to the leader above
 * peerRoundTripMs (the etcd mixin's etcdMemberCommunicationSlow) and at least peerOutlierFactor
 * times their round trip to each other, so a network every member shares is not the leader's.
 * Read from the followers' side: it is the leader's appends to them that wait. The value is the
 * round trip to the leader; it exits below half the level or half the factor.
 */
function leaderRoundTripReadings(
  leaderId: string,
  leader: readonly MemberSignals[],
  followers: readonly (readonly MemberSignals[])[],
  t: HygieneThresholds,
): Reading[] {
  const enter = t.peerRoundTripMs / 1_000;
  return carried(
    leader.map((s, i): Reading => {
      const back = leader.length - 1 - i;
      const { toLeader, between } = followerRoundTrips(
        leaderId,
        followers.map((f) => f[f.length - 1 - back]),
      );
      const base = { at: s.at, start: s.at - s.intervalMs };
      if (toLeader === undefined || between === undefined) return { ...base, value: undefined, level: 'between' };
      const ratio = toLeader / Math.max(between, Number.EPSILON);
      if (toLeader > enter && ratio >= t.peerOutlierFactor) return { ...base, value: toLeader, level: 'enter' };
      return { ...base, value: toLeader, level: toLeader < enter / 2 || ratio < t.peerOutlierFactor / 2 ? 'exit' : 'between' };
    }),
  );
}

/** The open breach of a rule: entered, and not yet under the exit level for a whole window since. */
function openBreach(signal: DegradationSignal, readings: readonly Reading[], windowMs: number): Breach | undefined {
  let breach: Breach | undefined;
  let exitSince: number | undefined;
  for (const r of readings) {
    if (r.level === 'enter') {
      breach ??= { signal, since: r.start, now: 'enter', worst: r.value ?? 0 };
      breach.worst = Math.max(breach.worst, r.value ?? 0);
      exitSince = undefined;
    } else if (breach && r.level === 'exit') {
      exitSince ??= r.start;
      if (r.at - exitSince >= windowMs) breach = undefined;
    } else {
      exitSince = undefined;
    }
    if (breach) {
      breach.now = r.level;
      breach.latest = r.value;
    }
  }
  return breach;
}

/** A member's open breaches of the level rules (a), which any member can have: the shared-cause check reads these. */
export function levelBreaches(samples: readonly MemberSignals[], t: HygieneThresholds, windowMs: number): Breach[] {
  return [
    openBreach('walFsyncP99', levelReadings(samples, 'walFsync', t), windowMs),
    openBreach('backendCommitP99', levelReadings(samples, 'backendCommit', t), windowMs),
  ].filter((b) => b !== undefined);
}

/** The leader's open breaches of every rule, the level ones first. */
export function leaderBreaches(
  leader: readonly MemberSignals[],
  followers: readonly (readonly MemberSignals[])[],
  t: HygieneThresholds,
  windowMs: number,
): Breach[] {
  const leaderId = leader.at(-1)?.memberId ?? '';
  return [
    ...levelBreaches(leader, t, windowMs),
    openBreach('heartbeatFailures', heartbeatReadings(leader, t), windowMs),
    openBreach('walFsyncOutlier', outlierReadings(leader, followers, 'walFsync', t), windowMs),
    openBreach('backendCommitOutlier', outlierReadings(leader, followers, 'backendCommit', t), windowMs),
    openBreach('leaderRoundTrip', leaderRoundTripReadings(leaderId, leader, followers, t), windowMs),
  ].filter((b) => b !== undefined);
}

/**
 * Each member's median p99 round trip as its peers saw it, their latest observation of it since
 * `since` (roundTripsSince): a member the others all reach slowly. Half or more slow to reach is
 * a network they share, not the leader's.
 */
export function slowToReach(
  members: readonly { id: string; samples: readonly MemberSignals[] }[],
  since: number,
  t: HygieneThresholds,
): { id: string; roundTrip: number }[] {
  const level = t.peerRoundTripMs / 1_000;
  return members.flatMap((m) => {
    const seen = members
      .filter((o) => o !== m)
      .flatMap((o) => {
        const observed = o.samples.filter((s) => s.at > since && s.peerRoundTripP99By?.[m.id] !== undefined).at(-1);
        return observed ? [observed.peerRoundTripP99By![m.id]!] : [];
      });
    const roundTrip = median(seen);
    return roundTrip !== undefined && roundTrip > level ? [{ id: m.id, roundTrip }] : [];
  });
}

export const signalWords: Record<DegradationSignal, string> = {
  walFsyncP99: 'WAL fsync p99',
  backendCommitP99: 'backend commit p99',
  heartbeatFailures: 'heartbeat send failures',
  // The figure says what it is measured against ("32× the best follower's").
  walFsyncOutlier: 'WAL fsync p99',
  backendCommitOutlier: 'backend commit p99',
  leaderRoundTrip: "followers' peer round trip p99 to it",
};

/** "512 ms", "0.4 ms": a latency in seconds as a person reads it. */
export const describeLatency = (seconds: number | undefined): string =>
  seconds === undefined ? 'unobserved' : seconds * 1_000 >= 10 ? `${Math.round(seconds * 1_000)} ms` : `${Math.round(seconds * 10_000) / 10} ms`;

/** A breach's figure in words: a latency, a ratio, or how many samples saw failures. */
export function describeFigure(signal: DegradationSignal, value: number | undefined, t: HygieneThresholds): string {
  if (value === undefined) return 'unobserved';
  if (signal === 'heartbeatFailures') return `rising in ${value} of the last ${t.heartbeatSamples} samples`;
  if (signal === 'walFsyncOutlier' || signal === 'backendCommitOutlier') return `${Math.round(value)}× the best follower's`;
  return describeLatency(value);
}
