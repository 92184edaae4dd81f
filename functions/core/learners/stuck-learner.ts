// A learner that was added and never started, or started and never promoted, for longer than the
// policy allows (kubeadm's join failed half-way): removing it costs no vote, so it is removed on its
// own. etcd does not say when a member was added, so the edge keeps when each learner was first
// seen. Pure. A cleanup is no remediation: it writes no removal record (the one-member-down rule
// reads those), takes no fleet slot and opens no incident (the storm guard counts incidents).
import type { Decision, MemberId } from '../common/index.ts';
import { describeDuration, describeTime, describeMember, type ClusterView, type MemberView } from '../view/index.ts';
import type { Policy } from '../policy/index.ts';

export interface StuckLearner {
  member: MemberView;
  firstSeen: number;
  /** Never started: no name, no client URL, no answer on any path. */
  started: boolean;
  message: string;
  evidence: Record<string, unknown>;
}

/** The learners in the view, whose first-seen times the edge keeps. */
export const learnersIn = (view: ClusterView): MemberId[] => view.members.filter((m) => m.isLearner).map((m) => m.id);

/** Two records of first sightings that say the same: the same learners, each first seen at the same time. */
export const sameSightings = (a: Readonly<Record<MemberId, number>>, b: Readonly<Record<MemberId, number>>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([id, at]) => a[id] === at);

/**
 * The learners past stuckLearnerAfterMs since first seen (0: none ever is). `owed` names the removed
 * member whose replacement is still owed, when the cleanup runs for an incident awaiting one.
 */
export function stuckLearners(
  view: ClusterView,
  firstSeen: Readonly<Record<MemberId, number>>,
  ctx: { now: number; policy: Pick<Policy, 'stuckLearnerAfterMs'>; owed?: string },
): StuckLearner[] {
  const afterMs = ctx.policy.stuckLearnerAfterMs;
  if (afterMs === 0) return [];
  return view.members.flatMap((member) => {
    const seen = firstSeen[member.id];
    if (!member.isLearner || seen === undefined || ctx.now - seen < afterMs) return [];
    const started = member.started && member.reachable;
    const what = started ? `was started but never promoted` : `was added and never started (no name, no answer on any path)`;
    const peer = member.peerUrls.length > 0 ? ` (peer ${member.peerUrls.join(', ')})` : '';
    const owed = ctx.owed ? ` The replacement for ${ctx.owed} is still owed: the incident stays awaiting-replacement.` : '';
    return [
      {
        member,
        firstSeen: seen,
        started,
        message:
          `Learner ${describeMember(member)}${peer} ${what}; it was first seen ${describeDuration(ctx.now - seen)} ago (${describeTime(seen)}), ` +
          `past the ${describeDuration(afterMs)} the policy allows (stuckLearnerAfterMs), so it is removed, which costs no vote.${owed}`,
        evidence: { started, firstSeen: seen, peerURLs: member.peerUrls },
      },
    ];
  });
}

export type LearnerGate = { kind: 'clean'; stuck: StuckLearner[] } | { kind: 'wait'; decision: Decision };

/**
 * Where the quorum gate refuses a removal because of learners alone (MEMBER_NOT_READY, no member
 * that never started as a voter): a learner past its window is cleaned up first, then the incident
 * goes on; one not yet past it is waited for, until then or until it is promoted, instead of a
 * block a person would have to lift. Undefined when the refusal stands as it is.
 */
export function learnerGate(
  refused: Decision,
  view: ClusterView,
  firstSeen: Readonly<Record<MemberId, number>>,
  ctx: { now: number; targetId: MemberId | undefined; policy: Pick<Policy, 'stuckLearnerAfterMs'> },
): LearnerGate | undefined {
  const afterMs = ctx.policy.stuckLearnerAfterMs;
  if (refused.kind !== 'block' || refused.reason !== 'MEMBER_NOT_READY' || afterMs === 0) return undefined;
  const holding = view.members.filter((m) => m.id !== ctx.targetId && (m.isLearner || !m.started));
  const target = view.members.find((m) => m.id === ctx.targetId);
  if (holding.length === 0 || holding.some((m) => !m.isLearner) || (target && !target.started)) return undefined;
  const stuck = stuckLearners(view, firstSeen, { now: ctx.now, policy: ctx.policy });
  if (stuck.length > 0) return { kind: 'clean', stuck };
  const at = Math.min(...holding.map((m) => (firstSeen[m.id] ?? ctx.now) + afterMs));
  return {
    kind: 'wait',
    decision: {
      kind: 'retry',
      reason: 'LEARNER_PENDING',
      at,
      reprobeNow: false,
      message: `${refused.message} Only learners hold it up: it waits for them to be promoted, and a learner still not promoted at ${describeTime(at)} (stuckLearnerAfterMs ${describeDuration(afterMs)} after it was first seen) is removed as stuck, which costs no vote.`,
      evidence: { ...refused.evidence, learners: holding.map((m) => m.id), stuckAt: at },
    },
  };
}
