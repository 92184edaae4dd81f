// Which follower takes leadership from a degraded leader: each follower is held to every rule in
// turn (a follower whose figures are unknown to none: it is refused, with why), the fit ones
// ranked, and the move said with the figures on both sides; no fit follower is a hold. Pure.
import { describeDuration } from '../view/index.ts';
import { describeMs, hold, latestRoundTrip, meanAnswerMs, sumSince, worstInWindow, type Facts, type HygieneDecision, type Member } from './hygiene-facts.ts';
import { describeFigure, describeLatency, signalWords, type Breach, type DegradationSignal, type HygieneThresholds } from './leader-degradation.ts';

/** The latency a signal is about, which a target must beat; heartbeat failures are about none (CPU, disk or network). */
const latencyOf = (signal: DegradationSignal): 'walFsyncP99' | 'backendCommitP99' | undefined =>
  signal === 'heartbeatFailures' || signal === 'leaderRoundTrip'
    ? undefined
    : signal === 'backendCommitP99' || signal === 'backendCommitOutlier'
      ? 'backendCommitP99'
      : 'walFsyncP99';

/** The figures a breach is said with. */
export const breachEvidence = (b: Breach, t: HygieneThresholds) => ({
  signal: b.signal,
  since: b.since,
  latest: b.latest,
  worst: b.worst,
  said: describeFigure(b.signal, b.latest, t),
});

/** A leader degraded now: a breach open for the whole window, its latest sample not under the exit level. */
export const degrading = (b: Breach) => b.now !== 'exit';
export const lasted = (b: Breach, now: number, windowMs: number) => now - b.since >= windowMs;

/**
 * Why a follower may not take leadership, or undefined when it may: each rule in turn. Strictly
 * better than the leader on the latency the leader breaches, and no worse on the other: the 1 ms ×
 * 2^k buckets give healthy disks the same p99, so "strictly better on each" would refuse every
 * follower of a cluster with one bad disk.
 */
function unfit(f: Facts, m: Member, strict: 'walFsyncP99' | 'backendCommitP99' | undefined): string | undefined {
  const { input, leader } = f;
  const { hygiene } = input.policy;
  const since = input.now - hygiene.windowMs;
  if (m.last.alarms.length > 0) return `raises ${m.last.alarms.join(', ')}`;
  if (m.last.hasLeader === false) return 'sees no leader';
  const lag = leader.last.raftIndex - m.last.raftAppliedIndex;
  if (lag > hygiene.maxApplyLag) return `has applied ${lag} entries fewer than the leader has committed (at most ${hygiene.maxApplyLag})`;
  const leftAt = Math.max(
    ...input.moves.filter((mv) => mv.from === m.id).map((mv) => mv.at),
    ...m.samples.filter((s) => s.isLeader).map((s) => s.at),
    Number.NEGATIVE_INFINITY,
  );
  if (input.now - leftAt < hygiene.returnBlockMs)
    return `led ${describeDuration(input.now - leftAt)} ago, within the return block of ${describeDuration(hygiene.returnBlockMs)}`;
  const levels = { walFsyncP99: f.t.fsyncP99Ms / 1_000, backendCommitP99: f.t.commitP99Ms / 1_000 } as const;
  const healthy = { walFsyncP99: f.t.healthyFsyncP99Ms / 1_000, backendCommitP99: f.t.healthyCommitP99Ms / 1_000 } as const;
  for (const key of ['walFsyncP99', 'backendCommitP99'] as const) {
    const word = signalWords[key];
    const mine = m.last[key];
    const theirs = leader.last[key];
    if (mine === undefined) return `has a ${word} that is unknown: its last sample observed no ${word.replace(' p99', '')}`;
    if (theirs !== undefined && (key === strict ? mine >= theirs : mine > theirs && mine > healthy[key])) {
      return `has a ${word} of ${describeLatency(mine)}, ${key === strict ? 'not better than' : 'worse than'} the leader's ${describeLatency(theirs)}`;
    }
    const worst = worstInWindow(m, key, since)!;
    if (worst > levels[key]) return `had a ${word} of ${describeLatency(worst)} in the window, above the warning level of ${describeLatency(levels[key])}`;
  }
  const answer = meanAnswerMs(m, since);
  if (answer !== undefined && answer > f.t.stallAnswerMs)
    return `answered its scrapes in ${describeMs(answer)} on average in the window, above the stall level of ${describeMs(f.t.stallAnswerMs)}: it is stalled itself`;
  // Its round trips to the others but the leader (the leader's own slowness is not the target's), against the leader's own.
  const rtt = latestRoundTrip(m, f.roundTripsSince, leader.id);
  const leaderRtt = latestRoundTrip(leader, f.roundTripsSince, '');
  if (rtt !== undefined && rtt > f.t.healthyPeerRoundTripMs / 1_000 && (leaderRtt === undefined || rtt > leaderRtt)) {
    return `has a peer round trip p99 of ${describeLatency(rtt)}, above ${leaderRtt === undefined ? 'the healthy level' : `the leader's ${describeLatency(leaderRtt)}`}`;
  }
  const slow = sumSince(m.samples, since, 'slowApplies');
  const leaderSlow = sumSince(leader.samples, since, 'slowApplies');
  if (slow > leaderSlow) return `had ${slow} slow applies in the window, more than the leader's ${leaderSlow}`;
  return undefined;
}

/**
 * The ranking of fit targets, best first: the lowest WAL fsync p99 (the disk the leader waits on
 * before each heartbeat), then its mean (coarse buckets tie p99s), then the lowest commit p99, the
 * least apply lag, the lowest peer round trip, and the id, so the pick is the same every time.
 */
function rank(a: Member, b: Member): number {
  const keys = [
    (m: Member) => m.last.walFsyncP99 ?? Infinity,
    (m: Member) => m.last.walFsyncMean ?? Infinity,
    (m: Member) => m.last.backendCommitP99 ?? Infinity,
    (m: Member) => m.last.raftIndex - m.last.raftAppliedIndex,
    (m: Member) => m.last.peerRoundTripP99 ?? Infinity,
  ];
  for (const key of keys) {
    const d = key(a) - key(b);
    if (d !== 0) return d;
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The target's figure on what the leader breaches: its latency; for heartbeats, how promptly it answers; for the way to the leader, its round trips. */
function comparedWith(f: Facts, signal: DegradationSignal, target: Member): string {
  const since = f.input.now - f.input.policy.hygiene.windowMs;
  const strict = latencyOf(signal);
  if (strict) return `while ${target.name}'s ${signalWords[strict]} was ${describeLatency(target.last[strict])}`;
  if (signal === 'leaderRoundTrip') {
    const rtt = latestRoundTrip(target, f.roundTripsSince, f.leader.id);
    if (rtt !== undefined) return `while ${target.name}'s round trip to the others was ${describeLatency(rtt)}`;
  }
  const [mine, theirs] = [meanAnswerMs(target, since), meanAnswerMs(f.leader, since)];
  if (signal === 'heartbeatFailures' && mine !== undefined && theirs !== undefined)
    return `while ${target.name} answered its scrapes in ${describeMs(mine)} on average and ${f.leader.name} in ${describeMs(theirs)}`;
  return `while ${target.name}'s WAL fsync p99 was ${describeLatency(target.last.walFsyncP99)}`;
}

/** The move to the best fit follower, or, with none, a hold that says why each was refused. */
export function moveDecision(f: Facts): HygieneDecision {
  const { input, leader, followers, breaches, t } = f;
  const cause = breaches.find((b) => degrading(b) && lasted(b, input.now, input.policy.hygiene.windowMs))!;
  const strict = latencyOf(cause.signal);
  const known = followers.map((m) => ({ m, why: unfit(f, m, strict) }));
  const fit = known
    .filter((v) => v.why === undefined)
    .map((v) => v.m)
    .sort(rank);
  // In the members' order, the unknown ones among them: no rule can read their figures.
  const order = input.members.map((m) => m.id);
  const verdicts: { m: Pick<Member, 'id' | 'name'>; why: string | undefined }[] = [
    ...known,
    ...f.unknown.map((u) => ({ m: u.member, why: `has figures that are unknown: ${u.why}` })),
  ];
  verdicts.sort((a, b) => order.indexOf(a.m.id) - order.indexOf(b.m.id));
  const said = `${leader.name}'s ${signalWords[cause.signal]} ${cause.signal === 'heartbeatFailures' ? 'were' : 'was'} ${describeFigure(cause.signal, cause.latest, t)} for ${describeDuration(input.now - cause.since)}`;
  const refused = verdicts.filter((v) => v.why).map((v) => ({ member: v.m.id, why: v.why }));
  const target = fit[0];
  if (!target) {
    const why = verdicts.map((v) => `${v.m.name} ${v.why}`).join('; ');
    return hold(
      'HYGIENE_NO_TARGET',
      `${said}, but no follower may take over: ${why || 'there is none'}.`,
      { leader: leader.id, refused },
      true,
      verdicts.map((v) => v.m.id),
    );
  }
  const compared = comparedWith(f, cause.signal, target);
  const dryRun = input.policy.dryRun || input.policy.hygiene.dryRun;
  const message = dryRun
    ? `would move leadership from ${leader.name} to ${target.name} (dry run: nothing is moved): ${said} ${compared}`
    : `move leadership from ${leader.name} to ${target.name}: ${said} ${compared}`;
  const figures = (m: Member) => ({
    member: m.id,
    walFsyncP99: m.last.walFsyncP99,
    walFsyncMean: m.last.walFsyncMean,
    backendCommitP99: m.last.backendCommitP99,
    backendCommitMean: m.last.backendCommitMean,
    peerRoundTripP99: m.last.peerRoundTripP99,
    applyLag: leader.last.raftIndex - m.last.raftAppliedIndex,
  });
  return {
    kind: dryRun ? 'would-move' : 'move',
    from: leader.id,
    to: target.id,
    reason: 'LEADER_DEGRADED',
    message,
    evidence: { breaches: breaches.map((b) => breachEvidence(b, t)), leader: figures(leader), target: figures(target), ranked: fit.map((m) => m.id), refused },
  };
}
