// A fake of the cluster guard in etcd (functions/adapters/etcd/etcd-guard.ts), for the unit tests
// of the application steps, whose etcd is a fake too. It keeps what etcd keeps: one lock key with a
// lease that lapses on the given clock, taken only if absent, and the removal record beside it. A
// test may make any call fail, as etcd fails (a timeout, an alarm, credentials).
import type { Clock } from '../../../functions/ports/clock.ts';
import type { ClusterGuard, ClusterHolds, LockHolder, RemovalRecord } from '../../../functions/ports/cluster-guard.ts';
import { EtcdCallError } from '../../../functions/ports/etcd.ts';
import { holdField } from '../../../functions/core/fleet/cluster-holds.ts';
import type { EtcdFailure } from '../../../functions/core/common/types.ts';

type Call = Exclude<keyof ClusterGuard, 'where'>;

export interface EtcdGuardFake extends ClusterGuard {
  /** The lock as etcd holds it now, with its lease's end; undefined when free or lapsed. */
  heldBy(): (LockHolder & { until: number }) | undefined;
  records: RemovalRecord[];
  /** The holds kept beside the lock. */
  kept: ClusterHolds;
  /** Every call made, in order. */
  calls: Call[];
  /** Makes every later call of these kinds fail so, until cleared. */
  failing: Partial<Record<Call, EtcdFailure>>;
}

export function etcdGuardFake(clock: Clock, where = 'etcd key /etcd-remediator/lock'): EtcdGuardFake {
  let lock: (LockHolder & { until: number }) | undefined;
  const current = () => (lock && lock.until > clock.now() ? lock : undefined);
  const fake: EtcdGuardFake = {
    where,
    records: [],
    kept: {},
    calls: [],
    failing: {},
    heldBy: current,
    async holder() {
      call('holder');
      const held = current();
      return held && { owner: held.owner, since: held.since };
    },
    async acquire(owner, leaseMs, { takeOverFrom } = {}) {
      call('acquire');
      const held = current();
      if (held && !(takeOverFrom && held.owner.startsWith(takeOverFrom))) return { held: false, holder: { owner: held.owner, since: held.since } };
      lock = { owner, since: clock.now(), until: clock.now() + leaseMs };
      return { held: true };
    },
    async renew(owner, leaseMs) {
      call('renew');
      const held = current();
      if (held?.owner !== owner) return false;
      held.until = clock.now() + leaseMs;
      return true;
    },
    async release(owner) {
      call('release');
      if (current()?.owner === owner) lock = undefined;
    },
    async removals() {
      call('removals');
      return fake.records.map((r) => ({ ...r }));
    },
    async saveRemovals(records) {
      call('saveRemovals');
      fake.records = records.map((r) => ({ ...r }));
    },
    async holds() {
      call('holds');
      return structuredClone(fake.kept);
    },
    async setHold(kind, value) {
      call('setHold');
      const field = holdField(kind);
      const before = JSON.stringify(fake.kept[field]);
      if (value === null) delete fake.kept[field];
      else Object.assign(fake.kept, { [field]: structuredClone(value) });
      return before !== JSON.stringify(fake.kept[field]);
    },
  };
  function call(name: Call): void {
    fake.calls.push(name);
    const failure = fake.failing[name];
    if (failure) throw new EtcdCallError(failure);
  }
  return fake;
}
