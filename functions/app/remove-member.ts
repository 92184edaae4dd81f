// Step 4 of remediation: MemberRemove through the healthiest non-target member.
import { classifyFailure } from '../core/classify.ts';
import { rankMoveCandidates } from '../core/candidates.ts';
import { credentialProblem } from '../core/credentials.ts';
import type { ReasonCode } from '../core/decision.ts';
import { describeMember, type ClusterView } from '../core/view.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import { EtcdCallError } from '../ports/etcd.ts';
import type { Deps } from './deps.ts';

export type RemoveOutcome =
  | { kind: 'removed'; via: string; alreadyGone: boolean }
  /** A block's message is a whole sentence; a retry's says what failed, and the caller adds when it tries again. */
  | { kind: 'retry' | 'block'; reason: ReasonCode; message: string; failures: string[] };

export async function removeMember(deps: Deps, cluster: ClusterEntry, view: ClusterView, targetId: string): Promise<RemoveOutcome> {
  const { transport } = deps.etcdFor(cluster);
  const target = view.members.find((m) => m.id === targetId);
  const name = target ? describeMember(target) : targetId;
  const failures: string[] = [];
  /** Every path asked and how it failed, in the classification's terms, to tell a credential problem. */
  const tried: Parameters<typeof credentialProblem>[0] = [];
  // Said when no member could be asked at all; a failure from one that was asked replaces it.
  let lastReason: ReasonCode = 'NO_HEALTHY_MEMBER';
  // The member with the highest applied index and lowest latency is the one most likely to answer.
  for (const via of rankMoveCandidates(view, targetId)) {
    for (const p of via.paths.filter((x) => x.reachability === 'ok')) {
      try {
        await transport.client({ endpoint: p.endpoint, path: p.path }).memberRemove(targetId, cluster.policy.callTimeoutMs);
        return { kind: 'removed', via: `${describeMember(via)} over ${p.path} ${p.endpoint}`, alreadyGone: false };
      } catch (error) {
        if (!(error instanceof EtcdCallError)) throw error;
        const row = classifyFailure(error.failure);
        const said = `${describeMember(via)} over ${p.path} ${p.endpoint}: ${error.failure.message}`;
        if (row.reason === 'MEMBER_NOT_FOUND') return { kind: 'removed', via: said, alreadyGone: true };
        if (row.class === 'block') {
          return { kind: 'block', reason: row.reason, message: `Removing ${name} was refused by ${said}; blocked, ${row.next}.`, failures: [said] };
        }
        failures.push(said);
        const reachability = row.reason === 'AUTH_FAILED' ? 'auth' : row.reason === 'TLS_FAILED' ? 'tls' : error.failure.kind;
        tried.push({ path: p.path, endpoint: p.endpoint, reachability, failure: error.failure });
        lastReason = row.reason;
        // etcd itself answered that the cluster cannot change now ("unhealthy cluster", "request
        // timed out"): every other member would say the same, so back off instead of asking them all.
        if (row.class === 'back-off') return { kind: 'retry', reason: row.reason, message: `etcd refused removing ${name} through ${said}`, failures };
        if (row.class !== 'next-path') break;
      }
    }
  }
  // Every member refused our credentials: waiting will not help, as the planner and the move say too.
  const problem = credentialProblem(tried);
  if (problem) {
    return { kind: 'block', reason: problem.reason, message: `Removing ${name} failed on credentials on every healthy member (${problem.failures}); blocked, fix ${problem.credential}.`, failures };
  }
  return {
    kind: 'retry',
    reason: lastReason,
    message: failures.length
      ? `Removing ${name} failed on every healthy member (${failures.join('; ')})`
      : `No healthy member is left to remove ${name} through`,
    failures,
  };
}
