// Step 4 of remediation, MemberRemove through the healthiest non-target member: what each refusal
// means, and what is decided once no member is left to ask. remove-member.ts makes the calls.
import { classifyFailure, type Decision, type ReasonCode, decidedBy, type EtcdFailure, type PathName, type Reachability } from '../common/index.ts';
import { credentialProblem } from '../view/index.ts';
import { retryAfterBackoff } from '../waits/index.ts';

/** A MemberRemove etcd did not carry out: through which member and path, and what was said. */
export interface FailedRemove {
  /** The member asked, as sentences name it. */
  via: string;
  path: PathName;
  endpoint: string;
  failure: EtcdFailure;
}

/** A block's message is a whole sentence; a retry's says what failed, and `removalFailed` adds when it tries again. */
export interface RemoveFailure {
  kind: 'retry' | 'block';
  reason: ReasonCode;
  message: string;
  failures: string[];
}

export type RemoveOutcome = { kind: 'removed'; via: string; alreadyGone: boolean } | RemoveFailure;

const said = (f: FailedRemove): string => `${f.via} over ${f.path} ${f.endpoint}: ${f.failure.message}`;

/** After a failed call (the last of `calls`): done after all, decided, or which member to ask next. `name` is the target's. */
export function afterFailedRemove(name: string, calls: readonly FailedRemove[]): RemoveOutcome | 'next-path' | 'next-member' {
  const last = calls.at(-1);
  if (!last) throw new Error('afterFailedRemove needs the call that failed');
  const row = classifyFailure(last.failure);
  // Not in the list: removed already (by an earlier try of ours whose answer was lost, or a person).
  if (row.reason === 'MEMBER_NOT_FOUND') return { kind: 'removed', via: said(last), alreadyGone: true };
  if (row.class === 'block')
    return { kind: 'block', reason: row.reason, message: `Removing ${name} was refused by ${said(last)}; blocked, ${row.next}.`, failures: [said(last)] };
  // etcd itself answered that the cluster cannot change now ("unhealthy cluster", "request timed
  // out"): every other member would say the same, so back off instead of asking them all.
  if (row.class === 'back-off')
    return { kind: 'retry', reason: row.reason, message: `etcd refused removing ${name} through ${said(last)}`, failures: calls.map(said) };
  return row.class === 'next-path' ? 'next-path' : 'next-member';
}

/** How a failed call reads as a path's reachability, to tell a credential problem. */
function reachabilityOf(failure: EtcdFailure): Exclude<Reachability, 'ok'> {
  const { reason } = classifyFailure(failure);
  return reason === 'AUTH_FAILED' ? 'auth' : reason === 'TLS_FAILED' ? 'tls' : failure.kind;
}

/** Every healthy member was asked, or none was left to ask. */
export function everyMemberFailed(name: string, calls: readonly FailedRemove[]): RemoveFailure {
  const failures = calls.map(said);
  // Every member refused our credentials: waiting will not help, as the planner and the move say too.
  const problem = credentialProblem(calls.map((c) => ({ path: c.path, endpoint: c.endpoint, reachability: reachabilityOf(c.failure), failure: c.failure })));
  if (problem) {
    return {
      kind: 'block',
      reason: problem.reason,
      message: `Removing ${name} failed on credentials on every healthy member (${problem.failures}); blocked, fix ${problem.credential}.`,
      failures,
    };
  }
  const last = calls.at(-1);
  return {
    kind: 'retry',
    // With no member to ask, nothing failed but the lack of one.
    reason: last ? classifyFailure(last.failure).reason : 'NO_HEALTHY_MEMBER',
    message: last ? `Removing ${name} failed on every healthy member (${failures.join('; ')})` : `No healthy member is left to remove ${name} through`,
    failures,
  };
}

/** remediate's decision on a removal that did not happen: a block, or a retry after the backoff (`retryAt`). */
export function removalFailed(failure: RemoveFailure, retryAt: number): Decision {
  const evidence = { failures: failure.failures };
  const decision: Decision =
    failure.kind === 'block'
      ? { kind: 'block', reason: failure.reason, message: failure.message, evidence }
      : retryAfterBackoff(failure.reason, retryAt, (when) => `${failure.message}; we try again at ${when}.`, evidence);
  return decidedBy(decision, 'member-remove');
}
