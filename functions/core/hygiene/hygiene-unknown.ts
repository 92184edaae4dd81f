// When a member's figures are unknown, and why: this check could not read it, its last sample is
// older than the window, or a figure the policy reads is NaN or infinite. NaN compares false with
// every level, so read as a figure it passed both as "not a breach" and as "no worse than the
// leader"; unknown is neither. An unknown follower is no target; an unknown leader is not judged.
// Pure.
import { describeDuration } from '../view/index.ts';
import type { Member } from './hygiene-facts.ts';
import type { MemberSignals } from './hygiene-signals.ts';

type Figure =
  | 'walFsyncP99'
  | 'walFsyncMean'
  | 'backendCommitP99'
  | 'backendCommitMean'
  | 'peerRoundTripP99'
  | 'answerMs'
  | 'heartbeatSendFailures'
  | 'slowApplies'
  | 'leaderChanges'
  | 'applyLag'
  | 'raftTerm'
  | 'raftIndex'
  | 'raftAppliedIndex';

const FIGURE_WORDS: Record<Figure, string> = {
  walFsyncP99: 'WAL fsync p99',
  walFsyncMean: 'WAL fsync mean',
  backendCommitP99: 'backend commit p99',
  backendCommitMean: 'backend commit mean',
  peerRoundTripP99: 'peer round trip p99',
  answerMs: 'scrape answer time',
  heartbeatSendFailures: 'heartbeat send failures',
  slowApplies: 'slow applies',
  leaderChanges: 'leader changes',
  applyLag: 'apply lag',
  raftTerm: 'raft term',
  raftIndex: 'raft index',
  raftAppliedIndex: 'raft applied index',
};

const notANumber = (value: number): string => (Number.isNaN(value) ? 'not a number (NaN)' : 'infinite');

/** The first figure of a sample that is not a finite number, and what it is; undefined when all are. */
function nonFinite(s: MemberSignals): { figure: string; is: string } | undefined {
  for (const key of Object.keys(FIGURE_WORDS) as Figure[]) {
    const value = s[key];
    if (value !== undefined && !Number.isFinite(value)) return { figure: FIGURE_WORDS[key], is: notANumber(value) };
  }
  const peer = Object.entries(s.peerRoundTripP99By ?? {}).find(([, rtt]) => !Number.isFinite(rtt));
  return peer && { figure: `peer round trip p99 to ${peer[0]}`, is: notANumber(peer[1]) };
}

/**
 * Why a member's figures are unknown at `now`, or undefined when they are known: its scrape
 * failed this check, its last sample is older than the window, or a sample the policy reads
 * (since `readSince`) holds a figure that is NaN or infinite.
 */
export function unknownWhy(m: Member, now: number, windowMs: number, readSince: number): string | undefined {
  if (m.scrapeFailed !== undefined) return `this check could not read it (${m.scrapeFailed})`;
  const age = now - m.last.at;
  if (age > windowMs) return `its last sample is ${describeDuration(age)} old, older than the window of ${describeDuration(windowMs)}`;
  for (const s of m.samples.filter((x) => x.at > readSince).reverse()) {
    const odd = nonFinite(s);
    if (odd) return `its ${odd.figure} in its ${s === m.last ? 'last sample' : `sample of ${describeDuration(now - s.at)} ago`} is ${odd.is}`;
  }
  return undefined;
}

/** "etcd-3's figures are unknown: …", for a list of members. */
export const describeUnknown = (unknown: readonly { member: Pick<Member, 'name'>; why: string }[]): string =>
  unknown.map((u) => `${u.member.name}'s figures are unknown: ${u.why}`).join('; ');
