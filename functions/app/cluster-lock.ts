// The cluster lock as remediation holds it: taken once, renewed in the background while the step
// runs (a snapshot or an actuator can outlast one lease), checked right before anything is removed,
// and released at the end. A holder that dies stops renewing, and its lease lapses.
import { randomUUID } from 'node:crypto';
import type { Deps } from './deps.ts';

export interface HeldLock {
  readonly owner: string;
  /** Renews now; false when another remediator holds the lock (ours lapsed and was taken). */
  stillHeld(): Promise<boolean>;
  /** Best effort: a lock that cannot be released lapses by itself. */
  release(): Promise<void>;
}

export async function takeClusterLock(
  deps: Pick<Deps, 'store' | 'clock' | 'log'>,
  clusterId: string,
  incidentId: string,
  leaseMs: number,
): Promise<HeldLock | undefined> {
  // One owner per run, not per incident: a duplicate delivery of the same step must not share it.
  const owner = `incident:${incidentId}:${randomUUID().slice(0, 8)}`;
  const renew = () => deps.store.acquireLock(clusterId, owner, leaseMs, deps.clock.now());
  if (!(await renew())) return undefined;
  let lost = false;
  const beat = setInterval(() => {
    renew().then(
      (held) => {
        lost ||= !held;
      },
      // A failed renewal is tried again at the next beat; the lease outlasts two of them.
      (error: unknown) => deps.log.warn('cluster lock not renewed', { clusterId, owner, error: String(error) }),
    );
  }, Math.max(10, Math.floor(leaseMs / 3)));
  beat.unref();
  return {
    owner,
    async stillHeld() {
      if (lost) return false;
      lost = !(await renew());
      return !lost;
    },
    async release() {
      clearInterval(beat);
      if (lost) return;
      try {
        await deps.store.releaseLock(clusterId, owner);
      } catch (error) {
        deps.log.warn('cluster lock not released; it lapses by itself', { clusterId, owner, error: String(error) });
      }
    },
  };
}
