// The quorum gate: may this member be removed without losing quorum?
// Cluster API's targetEtcdClusterHealthy, made stricter: a member other than the target that we
// cannot reach counts as unhealthy after the removal, and the cluster must hold quorum now, by the
// view's one rule (quorumFigures), not only after the removal. As KCP, it waits while any learner
// or never-started member is in the cluster. The rules are data, checked in order; the sentences
// live in quorum-gate-words.ts.
import type { ReasonCode, MemberId } from '../common/index.ts';
import { quorumSize, type ClusterView } from '../view/index.ts';
import { gateWords, type GateFacts } from './quorum-gate-words.ts';

export interface GateFigures {
  /** Voting members now, the target included. */
  votingNow: number;
  /** Voting members once the target is gone. */
  votingAfter: number;
  /** Non-target voting members that are not healthy. */
  unhealthyAfter: number;
  healthyAfter: number;
  /** Quorum of the membership after the removal: floor(votingAfter/2)+1. */
  needed: number;
  /** Quorum of the membership now: floor(votingNow/2)+1. */
  neededNow: number;
}

export interface GateResult {
  ok: boolean;
  reason: ReasonCode;
  /** One plain sentence naming the target and every unhealthy member. */
  message: string;
  figures: GateFigures;
  unhealthy: MemberId[];
  /** Learners and never-started members that make the gate wait (the target when it never started). */
  notReady: MemberId[];
}

interface GateRule {
  reason: ReasonCode;
  refuses: (f: GateFacts) => boolean;
  says: (f: GateFacts) => string;
}

/** In order: the first rule that refuses decides. */
const rules: readonly GateRule[] = [
  { reason: 'LAST_MEMBER', refuses: (f) => !f.target.isLearner && f.figures.votingNow <= 1, says: gateWords.lastMember },
  // A removal is a change etcd must commit by quorum: without one now, nothing can be removed.
  { reason: 'NO_QUORUM', refuses: (f) => !f.view.quorum.ok, says: gateWords.noQuorum },
  { reason: 'QUORUM_AT_RISK', refuses: (f) => f.figures.healthyAfter < f.figures.needed, says: gateWords.quorumAtRisk },
  // KCP: "wait for those members being promoted before taking further steps".
  { reason: 'MEMBER_NOT_READY', refuses: (f) => f.notReady.length > 0, says: gateWords.memberNotReady },
];

export function quorumGate(view: ClusterView, targetId: MemberId): GateResult {
  const target = view.members.find((m) => m.id === targetId);
  const voting = view.members.filter((m) => !m.isLearner);
  const sick = voting.filter((m) => m.id !== targetId && !m.healthy);
  const votingNow = voting.length;
  const votingAfter = votingNow - (target && !target.isLearner ? 1 : 0);
  const figures: GateFigures = {
    votingNow,
    votingAfter,
    unhealthyAfter: sick.length,
    healthyAfter: votingAfter - sick.length,
    needed: quorumSize(votingAfter),
    neededNow: quorumSize(votingNow),
  };
  // A member that never started may still be starting: KCP waits for it even as the target.
  const notReady = view.members.filter((m) => !m.started || (m.isLearner && m.id !== targetId));
  const result = (ok: boolean, reason: ReasonCode, message: string): GateResult => ({
    ok,
    reason,
    message,
    figures,
    unhealthy: sick.map((m) => m.id),
    notReady: notReady.map((m) => m.id),
  });

  if (!target) return result(false, 'TARGET_NOT_FOUND', gateWords.targetNotFound(view, targetId));
  const facts: GateFacts = { view, target, figures, sick, notReady };
  const refusal = rules.find((rule) => rule.refuses(facts));
  if (refusal) return result(false, refusal.reason, refusal.says(facts));
  return target.isLearner ? result(true, 'TARGET_IS_LEARNER', gateWords.learnerSafe(facts)) : result(true, 'QUORUM_SAFE', gateWords.quorumSafe(facts));
}
