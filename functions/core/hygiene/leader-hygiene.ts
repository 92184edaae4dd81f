// Leader hygiene: move leadership off a leader that stays degraded, before it fails, and never to
// a member that is worse. The checks run in order, each passing or deciding with its reason code
// and a sentence giving the figures (as plan-checks.ts and Cluster API's remediation preconditions
// do): figures known, settled cluster, a leader degraded for the whole window, no shared cause,
// the move limits, a target better on every signal (hygiene-target.ts). Pure: the samples come
// from the metrics adapter.
import { describeDuration, describeTime } from '../view/index.ts';
import { hold, leave, names, notEvaluated, type Facts, type HygieneDecision, type HygieneInput, type Member, type UnknownMember } from './hygiene-facts.ts';
import { breachEvidence, degrading, lasted, moveDecision } from './hygiene-target.ts';
import { sharedCause } from './hygiene-shared-cause.ts';
import { describeUnknown, unknownWhy } from './hygiene-unknown.ts';
import { describeFigure, describeLatency, leaderBreaches, roundTripsSince, signalWords } from './leader-degradation.ts';

export type { HygieneDecision, HygieneInput, HygieneMove } from './hygiene-facts.ts';

const DAY_MS = 86_400_000;

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
      return leave(
        'HYGIENE_LEADER_HEALTHY',
        `${leader.name} leads and breaches no degradation rule: WAL fsync p99 ${describeLatency(leader.last.walFsyncP99)}, backend commit p99 ${describeLatency(leader.last.backendCommitP99)}.`,
        evidence,
      );
    },
  },
  { name: 'shared-cause', run: sharedCause },
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

/** A scrape failure said as before the judgement: who could not be read, and that the leader is not judged. */
const couldNotRead = (failed: readonly { id: string; scrapeFailed?: string }[], why: string): HygieneDecision =>
  notEvaluated('HYGIENE_SCRAPE_FAILED', `Could not read ${failed.map((m) => m.scrapeFailed).join('; ')}: ${why}`, {
    failed: failed.map((m) => ({ member: m.id, error: m.scrapeFailed })),
  });

/** The member leading whose figures are unknown: named leader by a known member's Status, or, with no known member leading, leading in its own last sample. */
function unknownLeader(unknown: readonly UnknownMember[], known: readonly Member[]): UnknownMember | undefined {
  const named = new Set(known.map((m) => m.last.leaderId));
  const knownLeads = known.some((m) => m.last.isLeader);
  return unknown.find((u) => named.has(u.member.id) || (!knownLeads && u.member.last?.isLeader === true));
}

/** A judgement of the known members, with the unknown followers named: no news of theirs is read as good news. */
function noting(decision: HygieneDecision, unknown: readonly UnknownMember[]): HygieneDecision {
  // A move or no target names them among the refused already.
  if (unknown.length === 0 || decision.kind === 'move' || decision.kind === 'would-move' || decision.reason === 'HYGIENE_NO_TARGET') return decision;
  return {
    ...decision,
    message: `${decision.message} (${describeUnknown(unknown)}.)`,
    evidence: { ...decision.evidence, unknown: unknown.map((u) => ({ member: u.member.id, why: u.why })) },
  };
}

export function judgeLeaderHygiene(input: HygieneInput): HygieneDecision {
  const { hygiene } = input.policy;
  if (!hygiene.enabled) return notEvaluated('HYGIENE_DISABLED', 'Leader hygiene is off for this cluster (hygiene.enabled is false).');
  const failed = input.members.filter((m) => m.scrapeFailed !== undefined);
  // A member not sampled yet that was read: the cluster is just starting to be watched.
  const missing = input.members.filter((m) => m.samples.length === 0 && m.scrapeFailed === undefined);
  if (missing.length > 0 || input.members.every((m) => m.samples.length === 0)) {
    if (failed.length > 0) return couldNotRead(failed, 'the leader is not judged on part of the cluster.');
    return notEvaluated('HYGIENE_UNSTABLE', `No samples of ${missing.map((m) => m.name ?? m.id).join(', ') || 'any member'}: the cluster is not judged.`);
  }
  const readSince = roundTripsSince(input.now, hygiene);
  const members: Member[] = [];
  const unknown: UnknownMember[] = [];
  for (const m of input.members) {
    const said = { id: m.id, name: m.name ?? m.id, ...(m.scrapeFailed === undefined ? {} : { scrapeFailed: m.scrapeFailed }) };
    // Failing for longer than the samples are kept: no sample left, still unknown, never a figure.
    if (m.samples.length === 0) {
      unknown.push({ member: said, why: `this check could not read it (${m.scrapeFailed})` });
      continue;
    }
    const member: Member = { ...said, samples: m.samples, last: m.samples[m.samples.length - 1]! };
    const why = unknownWhy(member, input.now, hygiene.windowMs, readSince);
    if (why === undefined) members.push(member);
    else unknown.push({ member, why });
  }
  // Unknown is neither a breach nor health: a leader whose figures are unknown is not judged, and nothing is moved on it.
  const lead = unknownLeader(unknown, members);
  if (lead?.member.scrapeFailed !== undefined)
    return couldNotRead(failed, `${lead.member.name} leads and its figures are unknown, so the leader is not judged.`);
  if (lead) {
    return notEvaluated(
      'HYGIENE_FIGURES_UNKNOWN',
      `${lead.member.name} leads, but its figures are unknown: ${lead.why}; unknown is neither a breach nor health, so the leader is not judged and nothing is moved.`,
      {
        leader: lead.member.id,
        unknown: unknown.map((u) => ({ member: u.member.id, why: u.why })),
      },
    );
  }
  if (members.length === 0)
    return notEvaluated('HYGIENE_FIGURES_UNKNOWN', `Every member's figures are unknown (${describeUnknown(unknown)}): the leader is not judged.`, {
      unknown: unknown.map((u) => ({ member: u.member.id, why: u.why })),
    });
  return noting(judgeKnown(input, members, unknown, readSince), unknown);
}

/** The judgement on the members whose figures are known, the unknown followers no target. */
function judgeKnown(input: HygieneInput, members: Member[], unknown: UnknownMember[], readSince: number): HygieneDecision {
  const { hygiene, electionTimeoutMs } = input.policy;
  const why = unsettled(members, electionTimeoutMs);
  if (why)
    return notEvaluated('HYGIENE_UNSTABLE', `The cluster is not settled: ${why}; the leader is not judged.`, {
      members: members.map((m) => ({ member: m.id, term: m.last.raftTerm, isLeader: m.last.isLeader, hasLeader: m.last.hasLeader })),
    });
  const alarmed = members.filter((m) => m.last.alarms.length > 0);
  if (alarmed.length > 0) {
    const said = alarmed.map((m) => `${m.name} ${m.last.alarms.join(', ')}`).join('; ');
    return notEvaluated('HYGIENE_ALARM', `An alarm stands (${said}): a person must clear it; leadership is not moved.`, {
      alarms: alarmed.map((m) => ({ member: m.id, alarms: m.last.alarms })),
    });
  }
  const since = input.now - hygiene.recentElectionsMs;
  // An election before the first sample would go unseen: the samples must reach back that far.
  const short = members.filter((m) => m.samples[0]!.at - m.samples[0]!.intervalMs > since);
  if (short.length > 0) {
    const covered = Math.min(...short.map((m) => input.now - (m.samples[0]!.at - m.samples[0]!.intervalMs)));
    return notEvaluated(
      'HYGIENE_UNSTABLE',
      `The samples of ${names(short)} cover ${describeDuration(covered)}, less than the ${describeDuration(hygiene.recentElectionsMs)} in which no election may have happened: the leader is not judged yet.`,
    );
  }
  const elections = members.flatMap((m) =>
    m.samples.filter((s) => s.at > since && s.leaderChanges > 0).map((s) => ({ member: m.id, at: s.at, changes: s.leaderChanges })),
  );
  const terms = new Set(members.flatMap((m) => m.samples.filter((s) => s.at > since).map((s) => s.raftTerm)));
  if (elections.length > 0 || terms.size > 1) {
    const last = Math.max(...elections.map((e) => e.at), Number.NEGATIVE_INFINITY);
    const when = Number.isFinite(last) ? `${describeDuration(input.now - last)} ago` : `(terms ${[...terms].join(', ')})`;
    return notEvaluated(
      'HYGIENE_RECENT_ELECTIONS',
      `Leadership changed ${when}, within ${describeDuration(hygiene.recentElectionsMs)}: the cluster is already paying for elections, so none is added.`,
      { elections, terms: [...terms] },
    );
  }
  const leader = members.find((m) => m.last.isLeader)!;
  const followers = members.filter((m) => m !== leader);
  const t = hygiene.thresholds;
  const breaches = leaderBreaches(
    leader.samples,
    followers.map((m) => m.samples),
    t,
    hygiene.windowMs,
  );
  const facts: Facts = { input, t, members, leader, followers, unknown, breaches, roundTripsSince: readSince };
  for (const check of checks) {
    const decided = check.run(facts);
    if (decided !== 'pass') return decided;
  }
  return moveDecision(facts);
}
