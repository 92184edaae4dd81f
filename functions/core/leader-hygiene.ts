// Leader hygiene: move leadership off a leader that stays degraded, before it fails, and never to
// a member that is worse. The checks run in order, each passing or deciding with its reason code
// and a sentence giving the figures (as plan-checks.ts and Cluster API's remediation preconditions
// do): settled cluster, a leader degraded for the whole window, no shared cause, the move limits,
// a target better on every signal. Pure: the samples come from the metrics adapter.
import type { ReasonCode } from './decision.ts';
import { describeDuration, describeTime } from './explain.ts';
import type { MemberSignals } from './hygiene-signals.ts';
import {
  describeFigure,
  describeLatency,
  leaderBreaches,
  levelBreaches,
  roundTripsSince,
  slowToReach,
  signalWords,
  type Breach,
  type DegradationSignal,
  type HygieneThresholds,
} from './leader-degradation.ts';
import type { Policy } from './policy.ts';
import type { MemberId } from './types.ts';

/** A hygiene move this cluster had: when, and from which member to which. */
export interface HygieneMove {
  at: number;
  from: MemberId;
  to: MemberId;
}

export interface HygieneInput {
  /** Every voting member's samples, oldest first (one a minute, say), the newest of each from the same poll. */
  members: readonly { id: MemberId; name?: string; samples: readonly MemberSignals[] }[];
  /** This cluster's past hygiene moves, any order. */
  moves: readonly HygieneMove[];
  now: number;
  policy: Pick<Policy, 'hygiene' | 'electionTimeoutMs' | 'dryRun'>;
}

type Verdict = { reason: ReasonCode; message: string; evidence: Record<string, unknown> };

export type HygieneDecision =
  /** Not judged: off, or the cluster is not settled. */
  | ({ kind: 'not-evaluated' } & Verdict)
  /** Judged, nothing to do: healthy, degrading for less than the window, recovered. */
  | ({ kind: 'leave' } & Verdict)
  /** Degraded, but no move: a shared cause, the limits, no target. alert: a person should look. */
  | ({ kind: 'hold'; alert: boolean } & Verdict)
  /** Move leadership (or, in a dry run, say so and do nothing). */
  | ({ kind: 'move' | 'would-move'; from: MemberId; to: MemberId; reason: 'LEADER_DEGRADED' } & Omit<Verdict, 'reason'>);

const DAY_MS = 86_400_000;

interface Member {
  id: MemberId;
  name: string;
  samples: readonly MemberSignals[];
  last: MemberSignals;
}

interface Facts {
  input: HygieneInput;
  t: HygieneThresholds;
  members: Member[];
  leader: Member;
  followers: Member[];
  breaches: Breach[];
  /** Where round trips are read from (roundTripsSince): the window, or back to etcd's last observation. */
  roundTripsSince: number;
}

const hold = (reason: ReasonCode, message: string, evidence: Record<string, unknown>, alert = false): HygieneDecision => ({ kind: 'hold', alert, reason, message, evidence });
const leave = (reason: ReasonCode, message: string, evidence: Record<string, unknown>): HygieneDecision => ({ kind: 'leave', reason, message, evidence });
const notEvaluated = (reason: ReasonCode, message: string, evidence: Record<string, unknown> = {}): HygieneDecision => ({ kind: 'not-evaluated', reason, message, evidence });

const names = (members: readonly Member[]): string => members.map((m) => m.name).join(', ');

/** Settled: every member has two samples one election timeout apart, one leader in both, one term, a leader seen everywhere. */
function unsettled(members: readonly Member[], electionTimeoutMs: number): string | undefined {
  const short = members.filter((m) => m.samples.length < 2);
  if (short.length > 0) return `${names(short)} ${short.length === 1 ? 'has' : 'have'} fewer than two samples`;
  const close = members.filter((m) => m.last.at - m.samples[m.samples.length - 2]!.at < electionTimeoutMs);
  if (close.length > 0) return `the last two samples of ${names(close)} are less than one election timeout (${describeDuration(electionTimeoutMs)}) apart`;
  const lastTwo = members.flatMap((m) => m.samples.slice(-2));
  const terms = [...new Set(lastTwo.map((s) => s.raftTerm))];
  if (terms.length > 1) return `the last two samples show terms ${terms.join(', ')}`;
  const leaders = (back: number) => members.filter((m) => m.samples[m.samples.length - 1 - back]!.isLeader);
  const [now, before] = [leaders(0), leaders(1)];
  if (now.length !== 1 || before.length !== 1 || now[0] !== before[0]) {
    return `the last two samples show ${before.length === 0 ? 'no leader' : names(before)} then ${now.length === 0 ? 'no leader' : names(now)} leading`;
  }
  // Where the Status named a leader, every member's last two must name this one (etcd says '0' for none).
  const leaderId = now[0]!.id;
  const elsewhere = members.filter((m) => m.samples.slice(-2).some((s) => s.leaderId !== undefined && s.leaderId !== leaderId));
  if (elsewhere.length > 0) return `${names(elsewhere)} ${elsewhere.length === 1 ? 'names' : 'name'} another leader (or none) than ${now[0]!.name}`;
  const leaderless = members.filter((m) => m.last.hasLeader === false);
  if (leaderless.length > 0) return `${names(leaderless)} ${leaderless.length === 1 ? 'sees' : 'see'} no leader`;
  return undefined;
}

/** The figures a breach is said with. */
const breachEvidence = (b: Breach, t: HygieneThresholds) => ({ signal: b.signal, since: b.since, latest: b.latest, worst: b.worst, said: describeFigure(b.signal, b.latest, t) });

/** A leader degraded now: a breach open for the whole window, its latest sample not under the exit level. */
const degrading = (b: Breach) => b.now !== 'exit';
const lasted = (b: Breach, now: number, windowMs: number) => now - b.since >= windowMs;

/** The latency a signal is about, which a target must beat; heartbeat failures are about none (CPU, disk or network). */
const latencyOf = (signal: DegradationSignal): 'walFsyncP99' | 'backendCommitP99' | undefined =>
  signal === 'heartbeatFailures' || signal === 'leaderRoundTrip' ? undefined : signal === 'backendCommitP99' || signal === 'backendCommitOutlier' ? 'backendCommitP99' : 'walFsyncP99';

/** A member's last observed worst round trip since `since`, to anyone but `except`. */
function latestRoundTrip(m: Member, since: number, except: string): number | undefined {
  const observed = m.samples.filter((s) => s.at > since && s.peerRoundTripP99By !== undefined).at(-1);
  const trips = Object.entries(observed?.peerRoundTripP99By ?? {}).filter(([id]) => id !== except).map(([, rtt]) => rtt);
  return trips.length === 0 ? undefined : Math.max(...trips);
}

/** The worst of a member's window samples on one latency; undefined when none was observed. */
function worstInWindow(m: Member, key: 'walFsyncP99' | 'backendCommitP99', since: number): number | undefined {
  const values = m.samples.filter((s) => s.at > since).map((s) => s[key]).filter((v) => v !== undefined);
  return values.length === 0 ? undefined : Math.max(...values);
}

/** The mean time a member took to answer its scrapes within the window, when they were timed. */
function meanAnswerMs(m: Member, since: number): number | undefined {
  const timed = m.samples.filter((s) => s.at > since && s.answerMs !== undefined).map((s) => s.answerMs!);
  return timed.length === 0 ? undefined : timed.reduce((a, b) => a + b, 0) / timed.length;
}

const describeMs = (ms: number): string => `${Math.round(ms)} ms`;

const sum = (samples: readonly MemberSignals[], since: number, key: 'slowApplies'): number =>
  samples.filter((s) => s.at > since).reduce((total, s) => total + s[key], 0);

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
  if (input.now - leftAt < hygiene.returnBlockMs) return `led ${describeDuration(input.now - leftAt)} ago, within the return block of ${describeDuration(hygiene.returnBlockMs)}`;
  const levels = { walFsyncP99: f.t.fsyncP99Ms / 1_000, backendCommitP99: f.t.commitP99Ms / 1_000 } as const;
  const healthy = { walFsyncP99: f.t.healthyFsyncP99Ms / 1_000, backendCommitP99: f.t.healthyCommitP99Ms / 1_000 } as const;
  for (const key of ['walFsyncP99', 'backendCommitP99'] as const) {
    const word = signalWords[key];
    const mine = m.last[key];
    const theirs = leader.last[key];
    if (mine === undefined) return `observed no ${word.replace(' p99', '')} in its last sample`;
    if (theirs !== undefined && (key === strict ? mine >= theirs : mine > theirs && mine > healthy[key])) {
      return `has a ${word} of ${describeLatency(mine)}, ${key === strict ? 'not better than' : 'worse than'} the leader's ${describeLatency(theirs)}`;
    }
    const worst = worstInWindow(m, key, since)!;
    if (worst > levels[key]) return `had a ${word} of ${describeLatency(worst)} in the window, above the warning level of ${describeLatency(levels[key])}`;
  }
  const answer = meanAnswerMs(m, since);
  if (answer !== undefined && answer > f.t.stallAnswerMs) return `answered its scrapes in ${describeMs(answer)} on average in the window, above the stall level of ${describeMs(f.t.stallAnswerMs)}: it is stalled itself`;
  // Its round trips to the others but the leader (the leader's own slowness is not the target's), against the leader's own.
  const rtt = latestRoundTrip(m, f.roundTripsSince, leader.id);
  const leaderRtt = latestRoundTrip(leader, f.roundTripsSince, '');
  if (rtt !== undefined && rtt > f.t.healthyPeerRoundTripMs / 1_000 && (leaderRtt === undefined || rtt > leaderRtt)) {
    return `has a peer round trip p99 of ${describeLatency(rtt)}, above ${leaderRtt === undefined ? 'the healthy level' : `the leader's ${describeLatency(leaderRtt)}`}`;
  }
  const slow = sum(m.samples, since, 'slowApplies');
  const leaderSlow = sum(leader.samples, since, 'slowApplies');
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

interface HygieneCheck {
  name: string;
  run: (f: Facts) => HygieneDecision | 'pass';
}

const checks: readonly HygieneCheck[] = [
  {
    name: 'leader-degraded',
    run: ({ input, breaches, leader, t }) => {
      const { windowMs } = input.policy.hygiene;
      const evidence = { leader: leader.id, breaches: breaches.map((b) => breachEvidence(b, t)) };
      if (breaches.some((b) => degrading(b) && lasted(b, input.now, windowMs))) return 'pass';
      const now = breaches.find(degrading);
      if (now) {
        const at = now.since + windowMs;
        return leave(
          'HYGIENE_DEGRADING',
          `${leader.name}'s ${signalWords[now.signal]} ${now.signal === 'heartbeatFailures' ? 'are' : 'is'} ${describeFigure(now.signal, now.latest, t)}, for ${describeDuration(input.now - now.since)} of the window of ${describeDuration(windowMs)}: watched, and moved from ${describeTime(at)} if it lasts.`,
          evidence,
        );
      }
      const past = breaches[0];
      if (past) {
        return leave(
          'HYGIENE_RECOVERED',
          past.signal === 'heartbeatFailures'
            ? `${leader.name}'s heartbeat send failures were rising in as many as ${past.worst} of the last ${t.heartbeatSamples} samples within the window, and its newest sample has none: left alone.`
            : `${leader.name}'s ${signalWords[past.signal]} was as bad as ${describeFigure(past.signal, past.worst, t)} within the window and is ${describeFigure(past.signal, past.latest, t)} now, under its exit level: left alone.`,
          evidence,
        );
      }
      return leave('HYGIENE_LEADER_HEALTHY', `${leader.name} leads and breaches no degradation rule: WAL fsync p99 ${describeLatency(leader.last.walFsyncP99)}, backend commit p99 ${describeLatency(leader.last.backendCommitP99)}.`, evidence);
    },
  },
  {
    // Half or more of the members breaching one level rule: storage, a host or the network they share.
    name: 'shared-cause',
    run: ({ input, members, t, roundTripsSince: rttSince }) => {
      const { windowMs } = input.policy.hygiene;
      for (const signal of ['walFsyncP99', 'backendCommitP99'] as const) {
        const breaching = members
          .map((m) => ({ m, b: levelBreaches(m.samples, t, windowMs).find((b) => b.signal === signal && degrading(b)) }))
          .filter((x) => x.b !== undefined);
        if (breaching.length * 2 < members.length) continue;
        const figures = breaching.map(({ m, b }) => `${m.name} ${describeLatency(b!.latest)}`).join(', ');
        const level = describeLatency((signal === 'walFsyncP99' ? t.fsyncP99Ms : t.commitP99Ms) / 1_000);
        return hold(
          'HYGIENE_SHARED_DEGRADATION',
          `${breaching.length} of ${members.length} members breach the ${signalWords[signal]} level of ${level} (${figures}): the cause is shared, so leadership is not moved; check the storage they share, their hosts (CPU, I/O from other processes) and the network between them.`,
          { signal, level: level, members: breaching.map(({ m, b }) => ({ member: m.id, latest: b!.latest, since: b!.since })) },
          true,
        );
      }
      // A network every member is slow to reach over: the leader's round trip rule would move for nothing.
      const far = slowToReach(members, rttSince, t);
      if (far.length * 2 >= members.length) {
        const figures = far.map((x) => `${members.find((m) => m.id === x.id)!.name} ${describeLatency(x.roundTrip)}`).join(', ');
        return hold(
          'HYGIENE_SHARED_DEGRADATION',
          `${far.length} of ${members.length} members are reached by their peers in more than the round trip level of ${describeLatency(t.peerRoundTripMs / 1_000)} (${figures}): the network is slow for all of them, so leadership is not moved; check the network they share.`,
          { signal: 'peerRoundTrip', level: t.peerRoundTripMs, members: far.map((x) => ({ member: x.id, roundTrip: x.roundTrip })) },
          true,
        );
      }
      // A process starved of CPU answers late on every member alike, where heartbeat failures show on the leader alone.
      const since = input.now - windowMs;
      const stalled = members.map((m) => ({ m, ms: meanAnswerMs(m, since) })).filter((x) => x.ms !== undefined && x.ms > t.stallAnswerMs);
      if (stalled.length * 2 >= members.length) {
        const figures = stalled.map(({ m, ms }) => `${m.name} ${describeMs(ms!)}`).join(', ');
        return hold(
          'HYGIENE_SHARED_DEGRADATION',
          `${stalled.length} of ${members.length} members answered their scrapes in more than the stall level of ${describeMs(t.stallAnswerMs)} on average over the window (${figures}): the cause is shared, so leadership is not moved; check their hosts (CPU starvation, other processes) and what else they share.`,
          { signal: 'stall', level: t.stallAnswerMs, members: stalled.map(({ m, ms }) => ({ member: m.id, meanAnswerMs: ms })) },
          true,
        );
      }
      return 'pass';
    },
  },
  {
    name: 'moves-per-day',
    run: ({ input, leader }) => {
      const { maxMovesPerDay } = input.policy.hygiene;
      const today = input.moves.filter((m) => input.now - m.at < DAY_MS);
      if (today.length < maxMovesPerDay) return 'pass';
      return hold(
        'HYGIENE_MOVE_LIMIT',
        `${leader.name} is degraded, but the cluster had ${today.length} leader moves in 24 h, its limit of ${maxMovesPerDay}: nothing is moved; a person should find why its leaders degrade.`,
        { moves: today },
        true,
      );
    },
  },
  {
    name: 'cooldown',
    run: ({ input, leader }) => {
      const { cooldownMs } = input.policy.hygiene;
      const last = Math.max(...input.moves.map((m) => m.at), Number.NEGATIVE_INFINITY);
      if (input.now - last >= cooldownMs) return 'pass';
      return hold(
        'HYGIENE_COOLDOWN',
        `${leader.name} is degraded, but leadership moved ${describeDuration(input.now - last)} ago, within the cooldown of ${describeDuration(cooldownMs)}: no move before ${describeTime(last + cooldownMs)}.`,
        { lastMoveAt: last, cooldownMs },
      );
    },
  },
];

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
  if (signal === 'heartbeatFailures' && mine !== undefined && theirs !== undefined) return `while ${target.name} answered its scrapes in ${describeMs(mine)} on average and ${f.leader.name} in ${describeMs(theirs)}`;
  return `while ${target.name}'s WAL fsync p99 was ${describeLatency(target.last.walFsyncP99)}`;
}

function moveDecision(f: Facts): HygieneDecision {
  const { input, leader, followers, breaches, t } = f;
  const cause = breaches.find((b) => degrading(b) && lasted(b, input.now, input.policy.hygiene.windowMs))!;
  const strict = latencyOf(cause.signal);
  const verdicts = followers.map((m) => ({ m, why: unfit(f, m, strict) }));
  const fit = verdicts.filter((v) => v.why === undefined).map((v) => v.m).sort(rank);
  const said = `${leader.name}'s ${signalWords[cause.signal]} ${cause.signal === 'heartbeatFailures' ? 'were' : 'was'} ${describeFigure(cause.signal, cause.latest, t)} for ${describeDuration(input.now - cause.since)}`;
  const target = fit[0];
  if (!target) {
    const why = verdicts.map((v) => `${v.m.name} ${v.why}`).join('; ');
    return hold('HYGIENE_NO_TARGET', `${said}, but no follower may take over: ${why || 'there is none'}.`, { leader: leader.id, refused: verdicts.map((v) => ({ member: v.m.id, why: v.why })) }, true);
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
    evidence: { breaches: breaches.map((b) => breachEvidence(b, t)), leader: figures(leader), target: figures(target), ranked: fit.map((m) => m.id), refused: verdicts.filter((v) => v.why).map((v) => ({ member: v.m.id, why: v.why })) },
  };
}

export function judgeLeaderHygiene(input: HygieneInput): HygieneDecision {
  const { hygiene, electionTimeoutMs } = input.policy;
  if (!hygiene.enabled) return notEvaluated('HYGIENE_DISABLED', 'Leader hygiene is off for this cluster (hygiene.enabled is false).');
  const members: Member[] = input.members
    .filter((m) => m.samples.length > 0)
    .map((m) => ({ id: m.id, name: m.name ?? m.id, samples: m.samples, last: m.samples[m.samples.length - 1]! }));
  const missing = input.members.filter((m) => m.samples.length === 0);
  if (missing.length > 0 || members.length === 0) {
    return notEvaluated('HYGIENE_UNSTABLE', `No samples of ${missing.map((m) => m.name ?? m.id).join(', ') || 'any member'}: the cluster is not judged.`);
  }
  const why = unsettled(members, electionTimeoutMs);
  if (why) return notEvaluated('HYGIENE_UNSTABLE', `The cluster is not settled: ${why}; the leader is not judged.`, { members: members.map((m) => ({ member: m.id, term: m.last.raftTerm, isLeader: m.last.isLeader, hasLeader: m.last.hasLeader })) });
  const alarmed = members.filter((m) => m.last.alarms.length > 0);
  if (alarmed.length > 0) {
    const said = alarmed.map((m) => `${m.name} ${m.last.alarms.join(', ')}`).join('; ');
    return notEvaluated('HYGIENE_ALARM', `An alarm stands (${said}): a person must clear it; leadership is not moved.`, { alarms: alarmed.map((m) => ({ member: m.id, alarms: m.last.alarms })) });
  }
  const since = input.now - hygiene.recentElectionsMs;
  // An election before the first sample would go unseen: the samples must reach back that far.
  const short = members.filter((m) => m.samples[0]!.at - m.samples[0]!.intervalMs > since);
  if (short.length > 0) {
    const covered = Math.min(...short.map((m) => input.now - (m.samples[0]!.at - m.samples[0]!.intervalMs)));
    return notEvaluated('HYGIENE_UNSTABLE', `The samples of ${names(short)} cover ${describeDuration(covered)}, less than the ${describeDuration(hygiene.recentElectionsMs)} in which no election may have happened: the leader is not judged yet.`);
  }
  const elections = members.flatMap((m) => m.samples.filter((s) => s.at > since && s.leaderChanges > 0).map((s) => ({ member: m.id, at: s.at, changes: s.leaderChanges })));
  const terms = new Set(members.flatMap((m) => m.samples.filter((s) => s.at > since).map((s) => s.raftTerm)));
  if (elections.length > 0 || terms.size > 1) {
    const last = Math.max(...elections.map((e) => e.at), Number.NEGATIVE_INFINITY);
    const when = Number.isFinite(last) ? `${describeDuration(input.now - last)} ago` : `(terms ${[...terms].join(', ')})`;
    return notEvaluated('HYGIENE_RECENT_ELECTIONS', `Leadership changed ${when}, within ${describeDuration(hygiene.recentElectionsMs)}: the cluster is already paying for elections, so none is added.`, { elections, terms: [...terms] });
  }
  const leader = members.find((m) => m.last.isLeader)!;
  const followers = members.filter((m) => m !== leader);
  const t = hygiene.thresholds;
  const breaches = leaderBreaches(leader.samples, followers.map((m) => m.samples), t, hygiene.windowMs);
  const facts: Facts = { input, t, members, leader, followers, breaches, roundTripsSince: roundTripsSince(input.now, hygiene) };
  for (const check of checks) {
    const decided = check.run(facts);
    if (decided !== 'pass') return decided;
  }
  return moveDecision(facts);
}
