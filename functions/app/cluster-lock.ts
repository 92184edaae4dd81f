// The cluster lock as remediation holds it. It lives in the cluster's own etcd, where every
// remediator sees it whatever its state file; when etcd refuses the write (auth, no quorum) or the
// access has no guard, the state store's lock stands in, and the journal says so. Taken once,
// renewed in the background while the step runs (a snapshot or an actuator can outlast one lease),
// checked right before anything is removed, and released at the end. A holder that dies stops
// renewing, and its lease lapses.
import { randomUUID } from 'node:crypto';
import { rankMoveCandidates } from '../core/candidates.ts';
import { describeDuration, describeTime } from '../core/explain.ts';
import type { ClusterView } from '../core/view.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import type { ClusterGuard, LockHolder } from '../ports/cluster-guard.ts';
import { EtcdCallError, type EndpointTarget } from '../ports/etcd.ts';
import type { Deps } from './deps.ts';

export interface HeldLock {
  readonly owner: string;
  /** Where it is held, and why there when it is not etcd: for the journal. */
  readonly where: string;
  /** The guard the lock is held in: where the removal record is read and written. */
  readonly guard?: ClusterGuard;
  /** Renews now; false when another remediator holds the lock (ours lapsed and was taken). */
  stillHeld(): Promise<boolean>;
  /** Best effort: a lock that cannot be released lapses by itself. */
  release(): Promise<void>;
}

export type LockAttempt = { held: true; lock: HeldLock } | { held: false; why: string };

interface Backend {
  where: string;
  guard?: ClusterGuard;
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

/**
 * Where to ask etcd for the lock and the removal record: the healthy members other than the
 * target, likeliest first, over each path that answered them, then the configured client URLs.
 */
export function guardTargets(cluster: ClusterEntry, view: ClusterView | undefined, targetId: string | undefined): EndpointTarget[] {
  // With no target (a selector that matched no member), every healthy member will do.
  const healthy = view ? rankMoveCandidates(view, targetId ?? '') : [];
  const targets = [
    ...healthy.flatMap((m) => m.paths.filter((p) => p.reachability === 'ok').map(({ path, endpoint }) => ({ path, endpoint }))),
    ...healthy.flatMap((m) => m.clientUrls.map((endpoint) => ({ path: 'direct' as const, endpoint }))),
    ...cluster.endpoints.map((endpoint) => ({ path: 'direct' as const, endpoint })),
  ];
  const seen = new Set<string>();
  return targets.filter((t) => !seen.has(`${t.path} ${t.endpoint}`) && seen.add(`${t.path} ${t.endpoint}`));
}

/** `endpoints`: healthy members to ask etcd through, most likely first (see guardTargets). */
export async function takeClusterLock(
  deps: Pick<Deps, 'store' | 'clock' | 'log' | 'etcdFor'>,
  cluster: ClusterEntry,
  incidentId: string,
  endpoints: EndpointTarget[],
): Promise<LockAttempt> {
  // One owner per run, so a holder is named exactly; an earlier run of the same incident that a
  // crash left holding it is taken over (the incident's step lease keeps runs from overlapping).
  const sameIncident = `incident:${incidentId}:`;
  const owner = `${sameIncident}${randomUUID().slice(0, 8)}`;
  const leaseMs = cluster.policy.lockLeaseMs;
  const guard = endpoints.length > 0 ? deps.etcdFor(cluster).guard?.(endpoints) : undefined;
  let fallback = 'this etcd access keeps no lock in etcd';
  if (guard) {
    try {
      const got = await guard.acquire(owner, leaseMs, { takeOverFrom: sameIncident });
      if (!got.held) return { held: false, why: `another remediation holds the lock (${guard.where}${holderWords(got.holder, deps.clock.now())})` };
      return { held: true, lock: hold(deps, owner, leaseMs, { where: guard.where, guard, renew: () => guard.renew(owner, leaseMs), release: () => guard.release(owner) }) };
    } catch (error) {
      if (!(error instanceof EtcdCallError)) throw error;
      fallback = `etcd refused the lock (${error.failure.message})`;
    }
  }
  // The store's lock renews for the same owner: the incident itself, so a crashed run's hold is ours.
  const storeOwner = `incident:${incidentId}`;
  const renew = () => deps.store.acquireLock(cluster.clusterId, storeOwner, leaseMs, deps.clock.now());
  if (!(await renew())) return { held: false, why: 'another remediation sharing this state holds the lock' };
  const where = `the state store only, since ${fallback}: remediators with another state file do not see it`;
  deps.log.warn('cluster lock held in the state store only', { clusterId: cluster.clusterId, why: fallback });
  return { held: true, lock: hold(deps, owner, leaseMs, { where, renew, release: () => deps.store.releaseLock(cluster.clusterId, storeOwner).then(() => undefined) }) };
}

function holderWords(holder: LockHolder | undefined, now: number): string {
  if (!holder) return '';
  return `: ${holder.owner}, for ${describeDuration(Math.max(0, now - holder.since))} since ${describeTime(holder.since)}`;
}

function hold(deps: Pick<Deps, 'log'>, owner: string, leaseMs: number, backend: Backend): HeldLock {
  let lost = false;
  const beat = setInterval(() => {
    backend.renew().then(
      (held) => {
        lost ||= !held;
      },
      // A failed renewal is tried again at the next beat; the lease outlasts two of them.
      (error: unknown) => deps.log.warn('cluster lock not renewed', { owner, where: backend.where, error: String(error) }),
    );
  }, Math.max(10, Math.floor(leaseMs / 3)));
  beat.unref();
  return {
    owner,
    where: backend.where,
    ...(backend.guard ? { guard: backend.guard } : {}),
    async stillHeld() {
      if (lost) return false;
      lost = !(await backend.renew());
      return !lost;
    },
    async release() {
      clearInterval(beat);
      if (lost) return;
      try {
        await backend.release();
      } catch (error) {
        deps.log.warn('cluster lock not released; it lapses by itself', { owner, where: backend.where, error: String(error) });
      }
    },
  };
}
