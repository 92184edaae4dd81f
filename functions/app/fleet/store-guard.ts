// The cluster guard of a single-remediator cluster (policy singleRemediator): the lock and the
// removal record in this state store. Chosen only when the policy names the cluster so: any other
// remediator of it would see neither, which is why every other cluster keeps both in etcd.
import type { ClusterGuard } from '../../ports/cluster-guard.ts';
import type { Deps } from '../common/index.ts';

/** "incident:<id>:<run>" → "incident:<id>": the store's lock renews for the same owner, so a crashed run's hold is the incident's. */
const incidentOwner = (owner: string): string => (owner.lastIndexOf(':') > 0 ? owner.slice(0, owner.lastIndexOf(':')) : owner);

export function storeGuard(deps: Pick<Deps, 'store' | 'clock'>, clusterId: string): ClusterGuard {
  const take = (owner: string, leaseMs: number) => deps.store.acquireLock(clusterId, incidentOwner(owner), leaseMs, deps.clock.now());
  return {
    where: `the state store only (cluster ${clusterId} is a single-remediator cluster by policy: no other remediator sees its lock or removal record)`,
    acquire: async (owner, leaseMs) => ((await take(owner, leaseMs)) ? { held: true } : { held: false }),
    // The store's lock is never refused for space: whoever asks takes it, or is told it is held.
    holder: async () => undefined,
    renew: take,
    release: async (owner) => void (await deps.store.releaseLock(clusterId, incidentOwner(owner))),
    removals: () => deps.store.removalRecords(clusterId),
    saveRemovals: (records) => deps.store.saveRemovalRecords(clusterId, records),
    // The store's own pauses are the holds: the fleet facts read them already, and nothing else reads these.
    holds: async () => ({}),
    setHold: async () => false,
  };
}
