// The evidence rule: who leads, and is the target-as-leader really gone?
// A leader is judged unreachable only when every path to it is refused or times out AND the
// followers we can reach all name it leader at one term, across samples at least one election
// timeout apart: a live leader would have kept that term, a dead one would have been replaced
// by then unless the followers lost quorum, which the quorum gate catches. Whatever the policy and
// the grace window say, that takes two samples at least MIN_ELECTION_TIMEOUT_MS apart.
import { NO_LEADER, type MemberId, type PathProbe } from '../common/index.ts';
import { MIN_ELECTION_TIMEOUT_MS } from '../policy/index.ts';
import { describeMember, describeMemberIn as nameOf, type ClusterView, type LeaderView } from './view.ts';
import { describeDuration, describePaths, listWords } from './explain.ts';

export type LeaderVerdict =
  | 'TARGET_NOT_LEADER'
  | 'LEADER_REACHABLE'
  | 'LEADER_UNREACHABLE'
  | 'LEADER_UNREACHABLE_UNCONFIRMED'
  | 'ELECTION_IN_PROGRESS'
  | 'CLUSTER_UNREACHABLE';

export interface LeaderJudgement {
  verdict: LeaderVerdict;
  leaderId?: MemberId;
  term?: number;
  /** First sample of the current streak in which the target was seen unreachable-as-leader. */
  since?: number;
  /** On TARGET_NOT_LEADER: the target was the leader in an earlier sample (LEADER_CHANGED). */
  leaderChanged?: boolean;
  /** The target's paths in the current sample. */
  paths: PathProbe[];
  /** One plain sentence. */
  message: string;
}

const deadPath = (p: PathProbe): boolean => p.reachability === 'refused' || p.reachability === 'timeout';

/** Every probed path to the target was refused or timed out. */
export const everyPathDead = (paths: PathProbe[]): boolean => paths.length > 0 && paths.every(deadPath);

/** The target is down as the followers' agreed leader, at `term`, in this sample. */
function unreachableAsLeader(view: ClusterView, targetId: MemberId, term: number): boolean {
  const target = view.members.find((m) => m.id === targetId);
  const { leader } = view;
  return !!target && !target.reachable && everyPathDead(target.paths) && leader.consensus === 'agreed' && leader.id === targetId && leader.term === term;
}

/**
 * When the target was last seen down as the agreed leader (every path dead) in the samples before
 * the current one, and when that stretch began: what a recovery is judged against.
 */
export function downAsLeaderBefore(samples: ClusterView[], targetId: MemberId): { from: number; to: number } | undefined {
  const earlier = [...samples].sort((a, b) => a.at - b.at).slice(0, -1);
  const down = (view: ClusterView): boolean => view.leader.term !== undefined && unreachableAsLeader(view, targetId, view.leader.term);
  let last = earlier.length - 1;
  while (last >= 0 && !down(earlier[last]!)) last -= 1;
  if (last < 0) return undefined;
  let first = last;
  while (first > 0 && down(earlier[first - 1]!)) first -= 1;
  return { from: earlier[first]!.at, to: earlier[last]!.at };
}

function wasLeader(view: ClusterView, targetId: MemberId): boolean {
  if (view.leader.consensus === 'agreed' && view.leader.id === targetId) return true;
  return view.members.some((m) => m.id === targetId && m.status?.leaderId === targetId);
}

function describeDisagreement(view: ClusterView, leader: LeaderView): string {
  if (leader.consensus === 'none') return 'the members report no leader';
  const who = leader.reports.map((r) => `${nameOf(view, r.memberId)} sees ${nameOf(view, r.leaderId)} at term ${r.term}`);
  return `the members disagree on the leader (${listWords(who)})`;
}

/** A streak of "leader unreachable" begun before the oldest sample still kept. */
export interface CarriedStreak {
  since: number;
  term: number;
}

/** What to carry forward from a judgement, so a bounded history never restarts the grace window. */
export const streakOf = (j: LeaderJudgement): CarriedStreak | undefined =>
  (j.verdict === 'LEADER_UNREACHABLE' || j.verdict === 'LEADER_UNREACHABLE_UNCONFIRMED') && j.since !== undefined && j.term !== undefined
    ? { since: j.since, term: j.term }
    : undefined;

/** The paths that failed, said beside the one that answered: why a relay was needed. */
function failedPaths(paths: PathProbe[]): string {
  const failed = paths.filter((p) => p.reachability !== 'ok');
  return failed.length === 0 ? '' : ` (${describePaths(failed)})`;
}

export function judgeLeader(samples: ClusterView[], targetId: MemberId, electionTimeoutMs: number, carried?: CarriedStreak): LeaderJudgement {
  const ordered = [...samples].sort((a, b) => a.at - b.at);
  const now = ordered.at(-1);
  if (!now) return { verdict: 'CLUSTER_UNREACHABLE', paths: [], message: 'No probe of the cluster has been made yet.' };

  const target = now.members.find((m) => m.id === targetId);
  const paths = target?.paths ?? [];
  const name = target ? describeMember(target) : targetId;
  const { leader } = now;

  if (leader.reports.length === 0) {
    return {
      verdict: 'CLUSTER_UNREACHABLE',
      paths,
      message: `No member of the cluster answered a status call (${name}: ${describePaths(paths)}).`,
    };
  }

  const ownLeader = target?.reachable ? target.status?.leaderId : undefined;
  const anyoneNamesTarget = leader.reports.some((r) => r.leaderId === targetId);
  const otherLeader =
    leader.consensus === 'agreed' && leader.id !== targetId
      ? leader.id
      : ownLeader && ownLeader !== NO_LEADER && ownLeader !== targetId && !anyoneNamesTarget
        ? ownLeader
        : undefined;
  if (otherLeader) {
    const leaderChanged = ordered.slice(0, -1).some((s) => wasLeader(s, targetId));
    const term = leader.consensus === 'agreed' ? leader.term : target?.status?.raftTerm;
    const atTerm = term === undefined ? '' : ` at term ${term}`;
    return {
      verdict: 'TARGET_NOT_LEADER',
      leaderId: otherLeader,
      ...(term === undefined ? {} : { term }),
      leaderChanged,
      paths,
      message: leaderChanged
        ? `Leadership moved from ${name} to ${nameOf(now, otherLeader)}${atTerm}.`
        : `${name} is not the leader: the members agree the leader is ${nameOf(now, otherLeader)}${atTerm}.`,
    };
  }

  if (leader.consensus !== 'agreed') {
    return { verdict: 'ELECTION_IN_PROGRESS', paths, message: `No leader is settled: ${describeDisagreement(now, leader)}.` };
  }

  // The members agree the target leads.
  if (target?.reachable) {
    const answered = paths.filter((p) => p.reachability === 'ok').map((p) => `${p.path} ${p.endpoint}`);
    return {
      verdict: 'LEADER_REACHABLE',
      leaderId: targetId,
      ...(leader.term === undefined ? {} : { term: leader.term }),
      paths,
      message: `${name} is the leader${leader.term === undefined ? '' : ` at term ${leader.term}`} and answers on ${listWords(answered)}${failedPaths(paths)}.`,
    };
  }

  const term = leader.term;
  if (term === undefined) {
    const terms = [...new Set(leader.reports.map((r) => r.term))].sort((a, b) => a - b);
    return {
      verdict: 'ELECTION_IN_PROGRESS',
      leaderId: targetId,
      paths,
      message: `The term is moving: the members name ${name} leader but report terms ${terms.join(', ')}.`,
    };
  }

  const followers = listWords(leader.reports.map((r) => nameOf(now, r.memberId)));
  const nameVerb = leader.reports.length === 1 ? 'names' : 'name';
  if (!everyPathDead(paths)) {
    return {
      verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
      leaderId: targetId,
      term,
      paths,
      message: `${followers} ${nameVerb} ${name} leader at term ${term}, but not every path to it was refused or timed out (${describePaths(paths)}), which does not prove it is down.`,
    };
  }

  // Walk back over the streak of samples that show the same picture at the same term.
  let first = ordered.length - 1;
  while (first > 0 && unreachableAsLeader(ordered[first - 1]!, targetId, term)) first -= 1;
  // Only a streak reaching back to the oldest sample kept can have begun before it.
  const carriedOn = first === 0 && carried?.term === term && carried.since < ordered[0]!.at;
  const since = carriedOn ? carried.since : ordered[first]!.at;
  const before = first > 0 ? ordered[first - 1] : undefined;
  const termMoved = !carriedOn && first === ordered.length - 1 && !!before?.leader.reports.some((r) => r.term !== term);
  if (termMoved) {
    return {
      verdict: 'ELECTION_IN_PROGRESS',
      leaderId: targetId,
      term,
      since,
      paths,
      message: `The term is moving: ${followers} now ${nameVerb} ${name} leader at term ${term}, after another term in the previous sample.`,
    };
  }

  const span = now.at - since;
  const base = { leaderId: targetId, term, since, paths };
  // A floor above 0 means a span that reaches it spans two samples: one probe never proves it.
  const apart = Math.max(electionTimeoutMs, MIN_ELECTION_TIMEOUT_MS);
  if (span >= apart) {
    return {
      verdict: 'LEADER_UNREACHABLE',
      ...base,
      message: `${name} is the leader by the word of ${followers} at term ${term} for ${describeDuration(span)}, and every path to it fails: ${describePaths(paths)}.`,
    };
  }
  return {
    verdict: 'LEADER_UNREACHABLE_UNCONFIRMED',
    ...base,
    message: `${followers} ${nameVerb} ${name} leader at term ${term} and every path to it fails (${describePaths(paths)}), but not yet across one election timeout (${describeDuration(apart)}).`,
  };
}
