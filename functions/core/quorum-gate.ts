// The quorum gate: may this member be removed without losing quorum?
// Cluster API's targetEtcdClusterHealthy, made stricter: a member other than the target that we
// cannot reach counts as unhealthy after the removal, and the cluster must hold quorum now, by the
// view's one rule (quorumFigures), not only after the removal.
import type { ReasonCode } from './decision.ts';
import { describeMember, quorumSize, type ClusterView, type MemberView } from './view.ts';
import type { MemberId } from './types.ts';
import { listWords, whyUnhealthy } from './explain.ts';

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
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export function quorumGate(view: ClusterView, targetId: MemberId): GateResult {
  const target = view.members.find((m) => m.id === targetId);
  const voting = view.members.filter((m) => !m.isLearner);
  const others = voting.filter((m) => m.id !== targetId);
  const sick = others.filter((m) => !m.healthy);
  const targetVotes = !!target && !target.isLearner;

  const votingNow = voting.length;
  const votingAfter = votingNow - (targetVotes ? 1 : 0);
  const figures: GateFigures = {
    votingNow,
    votingAfter,
    unhealthyAfter: sick.length,
    healthyAfter: votingAfter - sick.length,
    needed: quorumSize(votingAfter),
    neededNow: quorumSize(votingNow),
  };
  const unhealthy = sick.map((m) => m.id);
  const sickWords = sick.map((m: MemberView) => `${describeMember(m)} ${whyUnhealthy(m)}`);
  const result = (ok: boolean, reason: ReasonCode, message: string): GateResult => ({
    ok,
    reason,
    message,
    figures,
    unhealthy,
  });

  if (!target) {
    return result(
      false,
      'TARGET_NOT_FOUND',
      `Member ${targetId} is not in the member list of ${plural(view.members.length, 'member')}; blocked, there is nothing to remove (it may already be gone).`,
    );
  }
  const name = describeMember(target);
  const sickTail = sick.length > 0 ? `: ${listWords(sickWords)}` : '';

  if (target.isLearner) {
    return result(
      true,
      'TARGET_IS_LEARNER',
      `Removing learner ${name} leaves the ${plural(votingNow, 'voting member')} untouched, so quorum is safe${sickTail}.`,
    );
  }
  if (votingNow <= 1) {
    return result(
      false,
      'LAST_MEMBER',
      `${name} is the last voting member; blocked, removing it would destroy the cluster.`,
    );
  }
  // One rule with the view's own figures: a removal is a change etcd must commit by quorum.
  const { quorum } = view;
  if (!quorum.ok) {
    return result(
      false,
      'NO_QUORUM',
      `The cluster has no quorum now: ${quorum.votingUp} of ${votingNow} voting members are up, below the quorum of ${quorum.size}${sickTail}; blocked, removing ${name} cannot help until they are back.`,
    );
  }
  if (figures.healthyAfter < figures.needed) {
    const bringBack = listWords(sick.map((m) => m.name || m.id));
    return result(
      false,
      'QUORUM_AT_RISK',
      `Removing ${name} would leave ${figures.healthyAfter} of ${votingAfter} voting members healthy, below the quorum of ${figures.needed}${sickTail}; blocked, bring ${bringBack} back or remediate ${sick.length === 1 ? 'it' : 'them'} first.`,
    );
  }
  return result(
    true,
    'QUORUM_SAFE',
    `Removing ${name} leaves ${figures.healthyAfter} of ${votingAfter} voting members healthy, meeting the quorum of ${figures.needed}${sickTail}.`,
  );
}
