// No removal without the cluster lock and the removal record in etcd: they are what every
// remediator of the cluster sees, whatever its state file. When etcd does not answer for them,
// the step waits and tries again; when etcd refuses them for good (a NOSPACE alarm, credentials),
// it blocks and says what a person must do. It never falls back to a lock only one state sees.
import { classifyFailure, type Decision, decidedBy, type EtcdFailure } from '../common/index.ts';
import { describeTime, noSpaceRaisedBy, type ClusterView } from '../view/index.ts';

/** What the guard was asked to do, as the sentence says it. */
export type GuardAction = 'take the cluster lock' | 'read the removal record' | 'write the removal record' | 'read the pauses and holds';

/** Said by the etcd guard when no target could be dialled over a path that can hold a lease. */
export const NO_LEASE_PATH = 'no member is reachable over a path that can hold a lease (direct or port-forward)';

export interface GuardFailureContext {
  /** The target as a sentence names it, e.g. "etcd-2 (8e9e05c52164694d)". */
  who: string;
  clusterId: string;
  /** Where the lock and record live, e.g. "etcd key /etcd-remediator/lock". */
  where: string;
  /** When a retry runs: the caller's backoff. */
  retryAt: number;
  /** The newest view: which members raised an alarm. */
  view?: ClusterView;
  /** The etcd user we authenticate as; undefined for none. */
  user?: string | undefined;
  /** Maintenance clears a NOSPACE alarm for this cluster (policy maintenance.clearNoSpace): a NOSPACE refusal waits for it. */
  clearsNoSpace?: boolean;
}

const NOTHING_REMOVED = 'no member is removed without the cluster lock and the removal record in etcd, so nothing was removed';

/** The members whose status shows a NOSPACE alarm, as names. */
export const noSpaceMembers = (view: ClusterView | undefined): string[] =>
  view ? noSpaceRaisedBy(view).map((id) => view.members.find((m) => m.id === id)?.name || id) : [];

/** What a person does about a NOSPACE alarm, then, as the end of a block's sentence. */
export const freeSpaceThenReport = (who: string): string =>
  `free space (etcdctl compact, then etcdctl defrag on each member, one at a time and the leader last, as a defragmentation stalls the member it runs on; or a larger --quota-backend-bytes), then run \`etcdctl alarm disarm\`, and report ${who} again.`;

/** The rule each action's failure is decided by, as evidence.decidedBy names it. */
const ruleOf = (action: GuardAction): string =>
  action === 'take the cluster lock' ? 'cluster-lock' : action === 'read the pauses and holds' ? 'fleet-holds' : 'removal-record';

export const guardFailureDecision = (action: GuardAction, failure: EtcdFailure, ctx: GuardFailureContext): Decision =>
  decidedBy(guardFailure(action, failure, ctx), ruleOf(action));

function guardFailure(action: GuardAction, failure: EtcdFailure, ctx: GuardFailureContext): Decision {
  const evidence = { action, where: ctx.where, failure };
  if (failure.message === NO_LEASE_PATH) {
    return {
      kind: 'block',
      reason: 'NO_SHARED_LOCK',
      message:
        `${ctx.who} is not removed: to ${action} in cluster ${ctx.clusterId}, ${NO_LEASE_PATH}, and ${NOTHING_REMOVED}; blocked: ` +
        'let remediation reach a member directly or through a port-forward (paths), or, if this state is the only remediator of the cluster, set policy singleRemediator.',
      evidence,
    };
  }
  const row = classifyFailure(failure);
  if (row.reason === 'ETCD_NO_SPACE') {
    const alarmed = noSpaceMembers(ctx.view);
    const raisedBy = alarmed.length > 0 ? `raised by ${alarmed.join(', ')}` : 'raised by a member';
    if (ctx.clearsNoSpace)
      return {
        kind: 'retry',
        at: ctx.retryAt,
        reprobeNow: false,
        reason: 'NOSPACE_CLEARING',
        message: `${ctx.who} waits: a NOSPACE alarm (${raisedBy}) stands, and etcd refused us ("${failure.message}") when we tried to ${action} (${ctx.where}); ${NOTHING_REMOVED}; maintenance clears the alarm, and we look again at ${describeTime(ctx.retryAt)}.`,
        evidence: { ...evidence, alarmed },
      };
    return {
      kind: 'block',
      reason: 'ETCD_NO_SPACE',
      message:
        `${ctx.who} is not removed: a NOSPACE alarm (${raisedBy}) stands, and etcd refuses every write while it does ("${failure.message}"), ` +
        `so we could not ${action} (${ctx.where}); ${NOTHING_REMOVED}; blocked: ${freeSpaceThenReport(ctx.who)}`,
      evidence: { ...evidence, alarmed },
    };
  }
  if (row.reason === 'AUTH_FAILED' || row.reason === 'TLS_FAILED') {
    const auth = row.reason === 'AUTH_FAILED';
    const fix = auth
      ? "the etcd user and password (--user with --password-file or ETCDCTL_PASSWORD; in run's config auth.user and auth.passwordFile)"
      : 'the client certificate and CA';
    const as = auth ? ` as ${ctx.user === undefined ? 'no user' : `user ${ctx.user}`}` : '';
    return {
      kind: 'block',
      reason: row.reason,
      message: `${ctx.who} is not removed: etcd refused us${as} when we tried to ${action} (${ctx.where}: ${failure.message}); ${NOTHING_REMOVED}; blocked, fix ${fix} for cluster ${ctx.clusterId}.`,
      evidence,
    };
  }
  return {
    kind: 'retry',
    at: ctx.retryAt,
    reprobeNow: false,
    reason: 'LOCK_UNAVAILABLE',
    message: `${ctx.who} waits: we could not ${action} (${ctx.where}: ${failure.kind === 'timeout' ? 'no answer in time' : failure.kind}, ${failure.message}); ${NOTHING_REMOVED}; we try again at ${describeTime(ctx.retryAt)}.`,
    evidence,
  };
}
