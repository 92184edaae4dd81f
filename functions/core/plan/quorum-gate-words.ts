// The quorum gate's sentences. Each says what the view shows, never more: a safety is claimed only
// where the gate passed, and a way out is offered only where it leads somewhere (no "remediate X
// first" when removing X would be refused in turn).
import { countsAsUp, describeMember, type ClusterView, type MemberView, howReached, listWords, whyUnhealthy } from '../view/index.ts';
import type { MemberId } from '../common/index.ts';
import { survivorOf } from '../recovery/index.ts';
import type { GateFigures } from './quorum-gate.ts';

/** What the rules look at, computed once by quorumGate. */
export interface GateFacts {
  view: ClusterView;
  target: MemberView;
  figures: GateFigures;
  /** Voting members other than the target that are not healthy. */
  sick: MemberView[];
  /** Learners other than the target, and members that never started (the target included). */
  notReady: MemberView[];
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const isAre = (n: number): string => (n === 1 ? 'is' : 'are');
const shortName = (m: MemberView): string => m.name || m.id;
const why = (members: MemberView[]): string => listWords(members.map((m) => `${describeMember(m)} ${whyUnhealthy(m)}`));
const tail = (members: MemberView[]): string => (members.length > 0 ? `: ${why(members)}` : '');
/** Members in the order the member list gives them, so either target reads the same sentence. */
const inViewOrder = (view: ClusterView, members: MemberView[]): MemberView[] => view.members.filter((m) => members.includes(m));

/**
 * The way out when the members cannot be restored: etcd disaster recovery from the member that
 * answers with the most recent data, named, or from a snapshot when none answers; `plan` prints
 * every step of it (core/recovery), and nothing here runs them.
 */
function disasterRecovery(view: ClusterView): string {
  const survivor = survivorOf(view.members);
  return survivor
    ? `recover the cluster from a snapshot of ${survivor.name}, the member that answers with the most recent data (term ${survivor.term}, applied index ${survivor.appliedIndex}), restored on every member (etcd disaster recovery: \`etcd-remediator plan\` prints each step)`
    : 'recover the cluster from a snapshot (etcd disaster recovery: `etcd-remediator plan` prints each step)';
}

/** "restore either A or B … or, if neither can be restored, recover …": how many, and which. */
function restore(down: MemberView[], count: number): { what: string; otherwise: string } {
  const names = down.map(describeMember);
  if (names.length === 0) return { what: 'the voting members', otherwise: 'if they cannot be restored' };
  if (names.length === 1) return { what: names[0]!, otherwise: 'if it cannot be restored' };
  if (count === 1 && names.length === 2) return { what: `either ${names[0]} or ${names[1]}`, otherwise: 'if neither can be restored' };
  if (count >= names.length) return { what: listWords(names), otherwise: 'if they cannot be restored' };
  return { what: `any ${count} of ${listWords(names)}`, otherwise: 'if that cannot be done' };
}

function noQuorum({ view, target }: GateFacts): string {
  const { quorum } = view;
  const down = view.members.filter((m) => !m.isLearner && !countsAsUp(m, view.leader));
  const way = restore(down, quorum.size - quorum.votingUp);
  const included = down.includes(target) ? '' : `, ${describeMember(target)} included,`;
  return `The cluster has no quorum now: ${quorum.votingUp} of ${quorum.voting} voting members are up, below the quorum of ${quorum.size}${tail(down)}; blocked, no member can be removed${included} until quorum is back: restore ${way.what}, or, ${way.otherwise}, ${disasterRecovery(view)}.`;
}

/**
 * Removing any unhealthy voting member leaves the same healthy ones, so when removing one is
 * unsafe, removing any is: say so once, for all of them, with what a person can do.
 */
function noneRemovable(f: GateFacts, healthyVoting: number): string {
  const { view, target, figures } = f;
  const unhealthy = inViewOrder(view, target.healthy ? f.sick : [...f.sick, target]);
  const candidates = inViewOrder(view, [...unhealthy, target]).map(describeMember);
  const subject = candidates.length === 2 ? `Neither ${candidates[0]} nor ${candidates[1]}` : `None of ${listWords(candidates)}`;
  const any = candidates.length === 2 ? 'either' : 'any of them';
  const atMost = target.healthy ? 'at most ' : '';
  const count = figures.needed - healthyVoting;
  const way = restore(unhealthy, count);
  const then = unhealthy.length - count === 1 ? 'the other can then be removed' : 'the rest can then be removed one at a time';
  return `${subject} can be removed safely: ${why(unhealthy)}, so removing ${any} would leave ${atMost}${healthyVoting} of ${figures.votingAfter} voting members healthy, below the quorum of ${figures.needed}; blocked, restore ${way.what} and ${then}, or, ${way.otherwise}, ${disasterRecovery(view)}.`;
}

function quorumAtRisk(f: GateFacts): string {
  const { target, figures, sick } = f;
  const name = describeMember(target);
  const bringBack = listWords(sick.map(shortName));
  if (target.isLearner) {
    return `Removing learner ${name} needs a quorum of the ${figures.votingNow} voting members to commit, and only ${figures.healthyAfter} of them ${isAre(figures.healthyAfter)} healthy, below the quorum of ${figures.needed}${tail(sick)}; blocked, bring ${bringBack} back first.`;
  }
  // With the target gone instead of a sick member, is the rest a quorum? Only then is "first" a way out.
  const healthyVoting = f.view.members.filter((m) => !m.isLearner && m.healthy).length;
  if (healthyVoting < figures.needed) return noneRemovable(f, healthyVoting);
  return `Removing ${name} would leave ${figures.healthyAfter} of ${figures.votingAfter} voting members healthy, below the quorum of ${figures.needed}${tail(sick)}; blocked, bring ${bringBack} back or remediate ${sick.length === 1 ? 'it' : 'them'} first.`;
}

function notReadyWords(m: MemberView): string {
  if (!m.started) return `${describeMember(m)} was added${m.isLearner ? ' as a learner' : ''} but never started`;
  return `${describeMember(m)} is a learner not yet promoted and ${howReached(m)}`;
}

function memberNotReady(f: GateFacts): string {
  const { target, figures, notReady } = f;
  const others = notReady.filter((m) => m !== target);
  const waitForOthers = others.length > 0 ? `, and wait for ${listWords(others.map(notReadyWords))}` : '';
  if (notReady.includes(target)) {
    return `${notReadyWords(target)} and may still be starting; blocked, as Cluster API's KubeadmControlPlane waits for it too: once its machine is known not to start it, remove it by hand (etcdctl member remove ${target.id})${waitForOthers}.`;
  }
  const tolerated = f.sick.filter((m) => !notReady.includes(m));
  const though = tolerated.length > 0 ? `, though ${why(tolerated)}` : '';
  return `Removing ${describeMember(target)} must wait while the membership changes: ${listWords(others.map(notReadyWords))} (quorum would hold: ${figures.healthyAfter} of ${figures.votingAfter} voting members healthy, meeting the quorum of ${figures.needed}${though}); blocked, as Cluster API's KubeadmControlPlane waits for members being promoted: promote, start or remove ${others.length === 1 ? 'it' : 'them'} (etcdctl member promote or member remove), then try again.`;
}

/** TARGET_NOT_FOUND's one sentence, whichever check finds it: the members listed, each with how it was reached. */
export function targetNotFoundSentence(view: ClusterView | undefined, described: string): string {
  const listed = (view?.members ?? []).map((m) => `${m.name || m.id}, which ${howReached(m)}`);
  return `No etcd member matches ${described} (members: ${listed.length > 0 ? listed.join('; ') : 'none'}); blocked, it may already be removed: check the member list.`;
}

export const gateWords = {
  targetNotFound: (view: ClusterView, targetId: MemberId): string => targetNotFoundSentence(view, `the id ${targetId}`),
  lastMember: ({ target }: GateFacts): string => `${describeMember(target)} is the last voting member; blocked, removing it would destroy the cluster.`,
  noQuorum,
  quorumAtRisk,
  memberNotReady,
  learnerSafe: ({ target, figures, sick }: GateFacts): string =>
    `Removing learner ${describeMember(target)} leaves the ${plural(figures.votingNow, 'voting member')} untouched, and ${figures.healthyAfter} of ${figures.votingNow} ${isAre(figures.healthyAfter)} healthy, meeting the quorum of ${figures.needed}${tail(sick)}.`,
  quorumSafe: ({ target, figures, sick }: GateFacts): string =>
    `Removing ${describeMember(target)} leaves ${figures.healthyAfter} of ${figures.votingAfter} voting members healthy, meeting the quorum of ${figures.needed}${tail(sick)}.`,
};
