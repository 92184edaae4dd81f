// The cluster lock as remediation holds it. It lives in the cluster's own etcd, where every
// remediator sees it whatever its state file, beside the removal record; when etcd does not take
// it, the step waits or blocks (core/removal/guard-failure.ts) and never falls back to a lock only one
// state sees. Only a cluster the policy names single-remediator keeps both in the state store.
// Taken once, renewed in the background while the step runs (a snapshot or an actuator can
// outlast one lease), checked right before anything is removed, and released at the end. A
// holder that dies stops renewing, and its lease lapses.
import { randomUUID } from 'node:crypto';
import { rankMoveCandidates } from '../../core/plan/index.ts';
import { describeDuration, describeTime, type ClusterView, type MemberView } from '../../core/view/index.ts';
import type { Decision, EtcdFailure } from '../../core/common/index.ts';
import { guardFailureDecision, NO_LEASE_PATH, type GuardAction } from '../../core/removal/index.ts';
import { guardDeadlineMs } from '../../core/budget/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { ClusterGuard, LockHolder } from '../../ports/cluster-guard.ts';
import type { Incident } from '../../ports/incident-store.ts';
import { EtcdCallError, type EndpointTarget } from '../../ports/etcd.ts';
import { type ClusterDeps, type Deps, nextTryAt } from '../common/index.ts';
import { storeGuard } from './store-guard.ts';

export interface HeldLock {
  readonly owner: string;
  /** Where it is held: for the journal. */
  readonly where: string;
  /** The guard the lock is held in: where the removal record is read and written. */
  readonly guard: ClusterGuard;
  /** Renews now; false when another remediator holds the lock (ours lapsed and was taken). */
  stillHeld(): Promise<boolean>;
  /** Best effort: a lock that cannot be released lapses by itself. */
  release(): Promise<void>;
}

export type LockAttempt =
  | { held: true; lock: HeldLock }
  /** Another remediation holds it: say who, and wait. */
  | { held: false; busy: string }
  /** etcd did not take it (a timeout, an alarm, credentials), or no guard could be reached. */
  | { held: false; failure: EtcdFailure; where: string };

/** Said when the lock and record cannot be asked for at all: the step blocks on it (NO_SHARED_LOCK). */
const noGuard: EtcdFailure = { kind: 'other', message: NO_LEASE_PATH };

/**
 * Where to ask etcd for the lock and the removal record: the healthy members other than the
 * target, likeliest first, over each path that answered them, then the configured client URLs.
 */
function guardTargets(cluster: ClusterEntry, healthy: readonly MemberView[]): EndpointTarget[] {
  const targets = [
    ...healthy.flatMap((m) => m.paths.filter((p) => p.reachability === 'ok').map(({ path, endpoint }) => ({ path, endpoint }))),
    ...healthy.flatMap((m) => m.clientUrls.map((endpoint) => ({ path: 'direct' as const, endpoint }))),
    ...cluster.endpoints.map((endpoint) => ({ path: 'direct' as const, endpoint })),
  ];
  const seen = new Set<string>();
  return targets.filter((t) => !seen.has(`${t.path} ${t.endpoint}`) && seen.add(`${t.path} ${t.endpoint}`));
}

/**
 * The guard of the cluster's lock and removal record: in its etcd, asked through the healthy
 * members of `view` other than `targetId` (guardTargets), each call with a deadline fit for the
 * network the probe measured; in the state store only for a single-remediator cluster.
 * Undefined when etcd cannot be asked at all.
 */
export function clusterGuard(
  deps: Pick<ClusterDeps, 'store' | 'clock' | 'etcdFor'>,
  cluster: ClusterEntry,
  view: ClusterView | undefined,
  targetId: string | undefined,
): ClusterGuard | undefined {
  if (cluster.policy.singleRemediator) return storeGuard(deps, cluster.clusterId);
  return etcdClusterGuard(deps.etcdFor, cluster, view, targetId);
}

/** The guard in the cluster's etcd, whatever its policy says of single remediators (see clusterGuard). */
export function etcdClusterGuard(
  etcdFor: ClusterDeps['etcdFor'],
  cluster: ClusterEntry,
  view: ClusterView | undefined,
  targetId: string | undefined,
): ClusterGuard | undefined {
  // With no target (a selector that matched no member), every healthy member will do.
  const asked = view ? rankMoveCandidates(view, targetId ?? '') : [];
  const targets = guardTargets(cluster, asked);
  return targets.length > 0 ? etcdFor(cluster).guard?.(targets, { deadlineMs: guardDeadlineMs(cluster.policy, asked) }) : undefined;
}

export type Guarded<T> = { ok: true; value: T } | { ok: false; failure: EtcdFailure; where: string };

/** One call to the guard: etcd's refusal or silence is an answer for the caller to judge, never "no record". */
export async function guarded<T>(guard: ClusterGuard | undefined, call: (guard: ClusterGuard) => Promise<T>): Promise<Guarded<T>> {
  if (!guard) return { ok: false, failure: noGuard, where: 'etcd' };
  try {
    return { ok: true, value: await call(guard) };
  } catch (error) {
    if (!(error instanceof EtcdCallError)) throw error;
    return { ok: false, failure: error.failure, where: guard.where };
  }
}

/**
 * etcd did not answer for the lock or the record, or refused them: a retry after the incident's
 * backoff, or a block (core/removal/guard-failure.ts), never a removal. `who` names the target.
 */
export const guardFailed = (
  deps: Pick<Deps, 'clock' | 'random'>,
  cluster: ClusterEntry,
  incident: Incident,
  action: GuardAction,
  failed: { failure: EtcdFailure; where: string },
  who: string,
): Decision =>
  guardFailureDecision(action, failed.failure, {
    who,
    clusterId: incident.clusterId,
    where: failed.where,
    retryAt: nextTryAt(deps, cluster, incident),
    ...(incident.views.at(-1) ? { view: incident.views.at(-1)! } : {}),
    user: cluster.auth?.username,
    clearsNoSpace: cluster.policy.maintenance.clearNoSpace,
  });

/** Asked through the healthy members of `view` other than `targetId` (see clusterGuard). */
export const takeClusterLock = (
  deps: Pick<ClusterDeps, 'store' | 'clock' | 'log' | 'etcdFor'>,
  cluster: ClusterEntry,
  incidentId: string,
  view: ClusterView | undefined,
  targetId: string | undefined,
): Promise<LockAttempt> => takeClusterLockAs(deps, cluster, `incident:${incidentId}`, view, targetId);

/** The lock for `holder` (`incident:<id>`, or `learner-check:<clusterId>` outside any incident). */
export async function takeClusterLockAs(
  deps: Pick<ClusterDeps, 'store' | 'clock' | 'log' | 'etcdFor'>,
  cluster: ClusterEntry,
  holder: string,
  view: ClusterView | undefined,
  targetId: string | undefined,
): Promise<LockAttempt> {
  // One owner per run, so a holder is named exactly; an earlier run of the same holder that a
  // crash left holding it is taken over (the incident's step lease keeps runs from overlapping).
  const sameIncident = `${holder}:`;
  const owner = `${sameIncident}${randomUUID().slice(0, 8)}`;
  const leaseMs = cluster.policy.lockLeaseMs;
  const got = await guarded(clusterGuard(deps, cluster, view, targetId), async (guard) => ({
    guard,
    answer: await guard.acquire(owner, leaseMs, { takeOverFrom: sameIncident }),
  }));
  if (!got.ok) return { held: false, failure: got.failure, where: got.where };
  const { guard, answer } = got.value;
  if (!answer.held) return { held: false, busy: `another remediation holds the lock (${guard.where}${holderWords(answer.holder, deps.clock.now())})` };
  return { held: true, lock: hold(deps, owner, leaseMs, guard) };
}

function holderWords(holder: LockHolder | undefined, now: number): string {
  if (!holder) return '';
  return `: ${holder.owner}, for ${describeDuration(Math.max(0, now - holder.since))} since ${describeTime(holder.since)}`;
}

function hold(deps: Pick<Deps, 'log'>, owner: string, leaseMs: number, guard: ClusterGuard): HeldLock {
  let lost = false;
  const beat = setInterval(
    () => {
      guard.renew(owner, leaseMs).then(
        (held) => {
          lost ||= !held;
        },
        // A failed renewal is tried again at the next beat; the lease outlasts two of them.
        (error: unknown) => deps.log.warn('cluster lock not renewed', { owner, where: guard.where, error: String(error) }),
      );
    },
    Math.max(10, Math.floor(leaseMs / 3)),
  );
  beat.unref();
  return {
    owner,
    where: guard.where,
    guard,
    async stillHeld() {
      if (lost) return false;
      lost = !(await guard.renew(owner, leaseMs));
      return !lost;
    },
    async release() {
      clearInterval(beat);
      if (lost) return;
      try {
        await guard.release(owner);
      } catch (error) {
        deps.log.warn('cluster lock not released; it lapses by itself', { owner, where: guard.where, error: String(error) });
      }
    },
  };
}
