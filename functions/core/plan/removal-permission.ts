// Before leadership is moved or a removal approved, etcd must be willing to remove the member.
// etcd gates MemberRemove on admin permission (IsAdminPermitted: the root role, or authentication
// off), and etcd 3.4 moves leadership for anyone: without this rule a user lacking the role costs
// the cluster an election on every run, then is refused. RoleList is gated on the same check and
// changes nothing, so its answer through a healthy member stands for the removal's.
import { classifyFailure, type Decision, type EtcdFailure } from '../common/index.ts';

/** What a healthy member said when asked for the admin permission; undefined when none could say. */
export type PermissionAnswer = { permitted: true; via: string } | { permitted: false; via: string; failure: EtcdFailure } | undefined;

export interface PermissionContext {
  /** The target as a sentence names it, e.g. "etcd-2 (8e9e05c52164694d)". */
  who: string;
  /** The etcd user we authenticate as; undefined for none. */
  user: string | undefined;
}

/** Only a decision that leads to a removal needs etcd's consent first. */
export const needsRemovalPermission = (decision: Decision): boolean => decision.kind === 'approve' || decision.kind === 'move-leader';

const HOW_TO_GIVE = "--user NAME with --password-file F or ETCDCTL_PASSWORD (in run's config: auth.user and auth.passwordFile)";

/**
 * The decision as it stands, unless etcd refused the permission on credentials: then a block
 * naming the user. Any other failure (no answer, no quorum) is left to the removal itself.
 */
export function withRemovalPermission(decision: Decision, answer: PermissionAnswer, ctx: PermissionContext): Decision {
  if (!needsRemovalPermission(decision) || answer === undefined || answer.permitted) return decision;
  if (classifyFailure(answer.failure).reason !== 'AUTH_FAILED') return decision;
  const as = ctx.user === undefined ? 'no user' : `user ${ctx.user}`;
  const spared = decision.kind === 'move-leader' ? 'leadership was not moved and nothing was removed' : 'nothing was removed';
  return {
    kind: 'block',
    reason: 'AUTH_FAILED',
    message:
      `Removing ${ctx.who} needs etcd's root role, and etcd refuses it to ${as} (${answer.via}: ${answer.failure.message}); ` +
      `${spared}; blocked, give an etcd user with the root role: ${HOW_TO_GIVE}.`,
    evidence: { wouldDo: decision.kind, wouldBe: decision.reason, permission: { user: ctx.user ?? null, via: answer.via, failure: answer.failure } },
  };
}
