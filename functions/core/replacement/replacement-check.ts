// Done means replaced: after a removal the incident awaits its replacement, and each check of the
// cluster decides, from one fresh probe, whether the cluster is whole again (back to the size it
// had before the removal, every member voting, started and answering), still short, overdue, or
// past the time anyone still checks. Pure: the probe, the journal and the schedule are the edge's.
import { describeDuration, describeTime, listWords, describeMember, type ClusterView } from '../view/index.ts';
import type { Policy } from '../policy/index.ts';
import type { ReasonCode } from '../common/index.ts';

/** The RetryDue reasons that mean "check the replacement", not "probe again": the catalogue routes by them. */
export const REPLACEMENT_CHECK_REASONS = ['REPLACEMENT_AWAITED', 'REPLACEMENT_OVERDUE'] as const satisfies readonly ReasonCode[];

/** Once overdue, the cluster is checked this often (or every checkEveryMs, when that is longer). */
export const OVERDUE_CHECK_EVERY_MS = 300_000;
/** Checks stop this long after the replacement became overdue, with a last word. */
export const CHECKS_END_AFTER_OVERDUE_MS = 86_400_000;

export interface RemovedMember {
  memberId: string;
  memberName: string;
  /** Epoch ms: the journal's member-removed marker. */
  at: number;
}

export interface ReplacementCheckInput {
  view: ClusterView;
  removed: RemovedMember;
  /** Voting members before the removal: the size the cluster must be back to (the removal record's sizeBefore). */
  sizeBefore: number;
  /** Members before the removal, to name the ones that joined since. */
  membersBefore: readonly string[];
  /** ReplacementOverdue was said already: it is said once. */
  overdueSaid: boolean;
  now: number;
  policy: Pick<Policy, 'replacement'>;
}

interface Said {
  message: string;
  evidence: Record<string, unknown>;
}

export type ReplacementVerdict =
  | (Said & { kind: 'replaced'; reason: Extract<ReasonCode, 'REPLACEMENT_JOINED'>; replacedAfterMs: number })
  | (Said & { kind: 'awaited'; reason: Extract<ReasonCode, 'REPLACEMENT_AWAITED'>; checkAt: number })
  | (Said & { kind: 'overdue'; reason: Extract<ReasonCode, 'REPLACEMENT_OVERDUE'>; checkAt: number })
  | (Said & { kind: 'ended'; reason: Extract<ReasonCode, 'REPLACEMENT_CHECKS_ENDED'> });

/** What keeps the cluster from being whole, member by member; empty when it is. */
export function whatIsShort(view: ClusterView, sizeBefore: number): string[] {
  const voting = view.members.filter((m) => !m.isLearner);
  const short: string[] = [];
  if (voting.length < sizeBefore) short.push(`${voting.length} of its ${sizeBefore} voting members`);
  for (const m of view.members) {
    if (!m.started) short.push(`${m.isLearner ? 'learner' : 'member'} ${m.id} added but never started`);
    else if (m.isLearner) short.push(`learner ${describeMember(m)} not promoted yet`);
    else if (!m.healthy) short.push(`${describeMember(m)} not answering healthy`);
  }
  if (view.leader.consensus !== 'agreed') short.push(`no agreed leader (${view.leader.consensus})`);
  return short;
}

const evidenceOf = (input: ReplacementCheckInput, short: string[]): Record<string, unknown> => ({
  voting: input.view.members.filter((m) => !m.isLearner).length,
  sizeBefore: input.sizeBefore,
  learners: input.view.members.filter((m) => m.isLearner).map((m) => m.id),
  ...(short.length > 0 ? { short } : {}),
});

export function checkReplacement(input: ReplacementCheckInput): ReplacementVerdict {
  const { view, removed, now, policy } = input;
  const { windowMs, checkEveryMs } = policy.replacement;
  const who = describeMember({ id: removed.memberId, name: removed.memberName });
  const since = Math.max(0, now - removed.at);
  const short = whatIsShort(view, input.sizeBefore);
  const evidence = evidenceOf(input, short);
  const removedWords = `${who} was removed at ${describeTime(removed.at)}`;
  if (short.length === 0) {
    const joined = view.members.filter((m) => !input.membersBefore.includes(m.id)).map(describeMember);
    const inPlace = joined.length > 0 ? `; ${listWords(joined)} joined in its place` : '';
    return {
      kind: 'replaced',
      reason: 'REPLACEMENT_JOINED',
      replacedAfterMs: since,
      message: `${removedWords}${inPlace} and the cluster is back to ${input.sizeBefore} voting members, every one started and answering: completed, ${describeDuration(since)} after the removal.`,
      evidence: { ...evidence, joined },
    };
  }
  const has = `the cluster has ${listWords(short)}`;
  const overdueAt = removed.at + windowMs;
  if (now < overdueAt) {
    const checkAt = Math.min(now + checkEveryMs, overdueAt);
    return {
      kind: 'awaited',
      reason: 'REPLACEMENT_AWAITED',
      checkAt,
      message: `${removedWords}, ${describeDuration(since)} ago, and no replacement has joined yet: ${has}; checked again at ${describeTime(checkAt)}, and said overdue at ${describeTime(overdueAt)}.`,
      evidence,
    };
  }
  const endAt = overdueAt + CHECKS_END_AFTER_OVERDUE_MS;
  if (now >= endAt) {
    return {
      kind: 'ended',
      reason: 'REPLACEMENT_CHECKS_ENDED',
      message: `${removedWords}, ${describeDuration(since)} ago, and no replacement has joined: ${has}. Checks stop here; the incident stays awaiting-replacement. Add the replacement by hand (check its Machine and kubeadm join), and report the cluster's members again once it is whole.`,
      evidence,
    };
  }
  const checkAt = Math.min(now + Math.max(checkEveryMs, OVERDUE_CHECK_EVERY_MS), endAt);
  return {
    kind: 'overdue',
    reason: 'REPLACEMENT_OVERDUE',
    checkAt,
    message:
      `${removedWords}, ${describeDuration(since)} ago, past the ${describeDuration(windowMs)} the policy allows for its replacement (replacement.windowMs), and no replacement has joined: ${has}. ` +
      `Check the replacement Machine and its kubeadm join (the new node's kubelet and etcd logs); the incident stays awaiting-replacement, checked every ${describeDuration(checkAt - now)} until ${describeTime(endAt)}, and completes when the replacement joins.`,
    evidence: { ...evidence, overdueSaid: input.overdueSaid },
  };
}
