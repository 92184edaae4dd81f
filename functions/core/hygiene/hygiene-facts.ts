// What leader hygiene's checks share: its input and decisions, the members as judged, and the
// figures read off a member's samples within the window. Pure.
import type { ReasonCode, MemberId } from '../common/index.ts';
import type { MemberSignals } from './hygiene-signals.ts';
import type { Breach, HygieneThresholds } from './leader-degradation.ts';
import type { Policy } from '../policy/index.ts';

/** A hygiene move this cluster had: when, and from which member to which. */
export interface HygieneMove {
  at: number;
  from: MemberId;
  to: MemberId;
}

export interface HygieneInput {
  /**
   * Every voting member's samples, oldest first (one a minute, say), the newest of each from the
   * same poll; scrapeFailed: why this check could not read the member (its figures are unknown).
   */
  members: readonly { id: MemberId; name?: string; samples: readonly MemberSignals[]; scrapeFailed?: string }[];
  /** This cluster's past hygiene moves, any order. */
  moves: readonly HygieneMove[];
  now: number;
  policy: Pick<Policy, 'hygiene' | 'electionTimeoutMs' | 'dryRun'>;
}

type Verdict = { reason: ReasonCode; message: string; evidence: Record<string, unknown> };

export type HygieneDecision =
  /** Not judged: off, the cluster is not settled, or the leader's figures are unknown. */
  | ({ kind: 'not-evaluated' } & Verdict)
  /** Judged, nothing to do: healthy, degrading for less than the window, recovered. */
  | ({ kind: 'leave' } & Verdict)
  /**
   * Degraded, but no move: a shared cause, the limits, no target. alert: a person should look.
   * members: who the hold is about where that tells it from the next one (no target: the followers refused).
   */
  | ({ kind: 'hold'; alert: boolean; members?: readonly MemberId[] } & Verdict)
  /** Move leadership (or, in a dry run, say so and do nothing). */
  | ({ kind: 'move' | 'would-move'; from: MemberId; to: MemberId; reason: 'LEADER_DEGRADED' } & Omit<Verdict, 'reason'>);

export interface Member {
  id: MemberId;
  name: string;
  samples: readonly MemberSignals[];
  last: MemberSignals;
  scrapeFailed?: string;
}

/** A member whose figures are unknown, and why (hygiene-unknown.ts); one whose scrapes always failed has no last sample. */
export interface UnknownMember {
  member: Pick<Member, 'id' | 'name' | 'scrapeFailed'> & { last?: MemberSignals };
  why: string;
}

export interface Facts {
  input: HygieneInput;
  t: HygieneThresholds;
  /** The members whose figures are known; the leader is one of them. */
  members: Member[];
  leader: Member;
  followers: Member[];
  /** Followers whose figures are unknown: no target, and not counted for or against a shared cause. */
  unknown: UnknownMember[];
  breaches: Breach[];
  /** Where round trips are read from (roundTripsSince): the window, or back to etcd's last observation. */
  roundTripsSince: number;
}

export const hold = (
  reason: ReasonCode,
  message: string,
  evidence: Record<string, unknown>,
  alert = false,
  members?: readonly MemberId[],
): HygieneDecision => ({
  kind: 'hold',
  alert,
  reason,
  message,
  evidence,
  ...(members ? { members } : {}),
});
export const leave = (reason: ReasonCode, message: string, evidence: Record<string, unknown>): HygieneDecision => ({
  kind: 'leave',
  reason,
  message,
  evidence,
});
export const notEvaluated = (reason: ReasonCode, message: string, evidence: Record<string, unknown> = {}): HygieneDecision => ({
  kind: 'not-evaluated',
  reason,
  message,
  evidence,
});

export const names = (members: readonly Pick<Member, 'name'>[]): string => members.map((m) => m.name).join(', ');

/** A member's last observed worst round trip since `since`, to anyone but `except`. */
export function latestRoundTrip(m: Member, since: number, except: string): number | undefined {
  const observed = m.samples.filter((s) => s.at > since && s.peerRoundTripP99By !== undefined).at(-1);
  const trips = Object.entries(observed?.peerRoundTripP99By ?? {})
    .filter(([id]) => id !== except)
    .map(([, rtt]) => rtt);
  return trips.length === 0 ? undefined : Math.max(...trips);
}

/** The worst of a member's window samples on one latency; undefined when none was observed. */
export function worstInWindow(m: Member, key: 'walFsyncP99' | 'backendCommitP99', since: number): number | undefined {
  const values = m.samples
    .filter((s) => s.at > since)
    .map((s) => s[key])
    .filter((v) => v !== undefined);
  return values.length === 0 ? undefined : Math.max(...values);
}

/** The mean time a member took to answer its scrapes within the window, when they were timed. */
export function meanAnswerMs(m: Member, since: number): number | undefined {
  const timed = m.samples.filter((s) => s.at > since && s.answerMs !== undefined).map((s) => s.answerMs!);
  return timed.length === 0 ? undefined : timed.reduce((a, b) => a + b, 0) / timed.length;
}

export const describeMs = (ms: number): string => `${Math.round(ms)} ms`;

export const sumSince = (samples: readonly MemberSignals[], since: number, key: 'slowApplies'): number =>
  samples.filter((s) => s.at > since).reduce((total, s) => total + s[key], 0);
