// The cluster guard in etcd: a lock key bound to a lease, taken in a transaction (created only if
// absent), renewed by moving it to a fresh lease in a transaction that checks it is still ours,
// and a removal record beside it. Every call has a deadline; a member that does not answer is
// passed over for the next, a member that answers "no" ends the call.
import { Etcd3 } from 'etcd3';
import { withinDeadline } from './deadline.ts';
import { etcd3Options, type MemberClientOptions } from './member-client.ts';
import { toEtcdCallError } from './normalize-error.ts';
import type { ClusterGuard, ClusterHolds, LockHolder, RemovalRecord } from '../../ports/cluster-guard.ts';
import { holdField, holdKindOf, holdOf } from '../../core/fleet/index.ts';
import { NO_LEASE_PATH } from '../../core/removal/index.ts';
import { EtcdCallError, type EndpointTarget, type TlsFiles } from '../../ports/etcd.ts';

export interface EtcdGuardOptions extends MemberClientOptions {
  /** e.g. "/etcd-remediator": the lock is `${prefix}/lock`, the record `${prefix}/removals`, the holds `${prefix}/holds/<kind>`. */
  prefix: string;
  deadlineMs: number;
  /**
   * The URL an etcd3 client dials for a path's endpoint, and the TLS files for it when they are
   * not the options' own (a certificate minted for that connection); undefined skips it. By
   * default only the direct path: a port-forward needs its local port, and the exec relay cannot
   * hold a lease.
   */
  dial?: (target: EndpointTarget) => Promise<{ endpoint: string; tls?: TlsFiles } | undefined>;
}

export interface EtcdGuards {
  /** The guard, asked through these endpoints in turn (healthy members, most likely first); `deadlineMs` for each call, when not the default. */
  at: (targets: EndpointTarget[], options?: { deadlineMs?: number }) => ClusterGuard;
  close: () => void;
}

const directOnly: NonNullable<EtcdGuardOptions['dial']> = (target) => Promise.resolve(target.path === 'direct' ? { endpoint: target.endpoint } : undefined);

interface LockValue extends LockHolder {
  lease: string;
}

/** The most calls one guard operation makes (acquire: grant, txn, takeover txn, revoke). */
const MAX_CALLS_PER_OPERATION = 4;

const ttlSeconds = (leaseMs: number): number => Math.max(2, Math.ceil(leaseMs / 1000));

export function createEtcdGuards(options: EtcdGuardOptions): EtcdGuards {
  const lockKey = Buffer.from(`${options.prefix}/lock`);
  const recordKey = Buffer.from(`${options.prefix}/removals`);
  const holdsPrefix = `${options.prefix}/holds/`;
  const holdKey = (kind: string): Buffer => Buffer.from(`${holdsPrefix}${kind}`);
  const clients = new Map<string, { client: Etcd3; tls: TlsFiles | undefined }>();
  /** One client per endpoint; new TLS files (a renewed certificate) make a new one. */
  const clientFor = (endpoint: string, tls = options.tls): Etcd3 => {
    const known = clients.get(endpoint);
    if (known && known.tls === tls) return known.client;
    known?.client.close();
    const client = new Etcd3(etcd3Options(endpoint, { ...options, ...(tls ? { tls } : {}) }));
    clients.set(endpoint, { client, tls });
    return client;
  };
  const dial = options.dial ?? directOnly;
  /**
   * First member that answers decides; one that refuses (auth, not enough members, NOSPACE)
   * decides too. Each call of an operation gets the whole call deadline: a lock is two to four
   * round trips, and on a slow network one shared deadline would never fit them all.
   */
  async function onAny<T>(targets: EndpointTarget[], callMs: number, run: (etcd: Etcd3, deadline: () => Date) => Promise<T>): Promise<T> {
    let last: EtcdCallError | undefined;
    for (const target of targets) {
      const dialed = await dial(target).catch(() => undefined);
      if (dialed === undefined) continue;
      try {
        const deadline = () => new Date(Date.now() + callMs);
        return await withinDeadline(callMs * MAX_CALLS_PER_OPERATION, () => run(clientFor(dialed.endpoint, dialed.tls), deadline));
      } catch (error) {
        last = toEtcdCallError(error);
        if (last.failure.kind !== 'refused' && last.failure.kind !== 'timeout') throw last;
      }
    }
    throw last ?? new EtcdCallError({ kind: 'other', message: NO_LEASE_PATH });
  }

  const currentLock = async (etcd: Etcd3, deadline: () => Date): Promise<{ raw: Buffer; value: LockValue } | undefined> => {
    const { kvs } = await etcd.kv.range({ key: lockKey }, { deadline: deadline() });
    const raw = kvs[0]?.value;
    return raw ? { raw, value: JSON.parse(raw.toString()) as LockValue } : undefined;
  };

  const grant = async (etcd: Etcd3, leaseMs: number, deadline: () => Date): Promise<string> =>
    (await etcd.leaseClient.leaseGrant({ TTL: ttlSeconds(leaseMs) }, { deadline: deadline() })).ID;

  const revoke = async (etcd: Etcd3, lease: string | undefined, deadline: () => Date): Promise<void> => {
    if (!lease) return;
    // A lease that already lapsed is fine: it is gone either way.
    await etcd.leaseClient.leaseRevoke({ ID: lease }, { deadline: deadline() }).catch(() => undefined);
  };

  const guardAt = (targets: EndpointTarget[], { deadlineMs = options.deadlineMs }: { deadlineMs?: number } = {}): ClusterGuard => ({
    where: `etcd key ${lockKey.toString()}`,

    acquire: (owner, leaseMs, { takeOverFrom } = {}) =>
      onAny(targets, deadlineMs, async (etcd, deadline) => {
        const lease = await grant(etcd, leaseMs, deadline);
        const value = Buffer.from(JSON.stringify({ owner, since: Date.now(), lease } satisfies LockValue));
        const txn = await etcd.kv.txn(
          {
            compare: [{ key: lockKey, target: 'Create', result: 'Equal', create_revision: 0 }],
            success: [{ request_put: { key: lockKey, value, lease } }],
            failure: [{ request_range: { key: lockKey } }],
          },
          { deadline: deadline() },
        );
        if (txn.succeeded) return { held: true as const };
        const raw = txn.responses[0]?.response_range.kvs[0]?.value;
        const holder = raw ? (JSON.parse(raw.toString()) as LockValue) : undefined;
        if (raw && holder && takeOverFrom && holder.owner.startsWith(takeOverFrom)) {
          // Replaced only if it is still exactly what we read.
          const taken = await etcd.kv.txn(
            { compare: [{ key: lockKey, target: 'Value', result: 'Equal', value: raw }], success: [{ request_put: { key: lockKey, value, lease } }] },
            { deadline: deadline() },
          );
          if (taken.succeeded) {
            await revoke(etcd, holder.lease, deadline);
            return { held: true as const };
          }
        }
        await revoke(etcd, lease, deadline);
        return { held: false as const, ...(holder ? { holder: { owner: holder.owner, since: holder.since } } : {}) };
      }),

    holder: () =>
      onAny(targets, deadlineMs, async (etcd, deadline) => {
        const current = await currentLock(etcd, deadline);
        return current && { owner: current.value.owner, since: current.value.since };
      }),

    renew: (owner, leaseMs) =>
      onAny(targets, deadlineMs, async (etcd, deadline) => {
        const current = await currentLock(etcd, deadline);
        if (current?.value.owner !== owner) return false;
        // A fresh lease, moved onto the key only if the key is still exactly ours.
        const lease = await grant(etcd, leaseMs, deadline);
        const value = Buffer.from(JSON.stringify({ ...current.value, lease } satisfies LockValue));
        const txn = await etcd.kv.txn(
          {
            compare: [{ key: lockKey, target: 'Value', result: 'Equal', value: current.raw }],
            success: [{ request_put: { key: lockKey, value, lease } }],
          },
          { deadline: deadline() },
        );
        await revoke(etcd, txn.succeeded ? current.value.lease : lease, deadline);
        return txn.succeeded;
      }),

    release: (owner) =>
      onAny(targets, deadlineMs, async (etcd, deadline) => {
        const current = await currentLock(etcd, deadline);
        if (current?.value.owner === owner) {
          await etcd.kv.txn(
            {
              compare: [{ key: lockKey, target: 'Value', result: 'Equal', value: current.raw }],
              success: [{ request_delete_range: { key: lockKey } }],
            },
            { deadline: deadline() },
          );
          await revoke(etcd, current.value.lease, deadline);
        }
      }),

    removals: () =>
      onAny(targets, deadlineMs, async (etcd, deadline) => {
        const { kvs } = await etcd.kv.range({ key: recordKey }, { deadline: deadline() });
        const raw = kvs[0]?.value;
        return raw ? (JSON.parse(raw.toString()) as RemovalRecord[]) : [];
      }),

    saveRemovals: (records) =>
      onAny(targets, deadlineMs, async (etcd, deadline) => {
        await etcd.kv.put({ key: recordKey, value: Buffer.from(JSON.stringify(records)) }, { deadline: deadline() });
      }),

    holds: () =>
      onAny(targets, deadlineMs, async (etcd, deadline) => {
        // Every key under the holds' prefix: range_end is the prefix with its last byte plus one ('/' + 1 is '0').
        const { kvs } = await etcd.kv.range({ key: Buffer.from(holdsPrefix), range_end: Buffer.from(`${options.prefix}/holds0`) }, { deadline: deadline() });
        const holds: ClusterHolds = {};
        for (const kv of kvs) {
          const key = kv.key.toString();
          const kind = holdKindOf(options.prefix, key);
          if (kind === undefined) continue;
          Object.assign(holds, { [holdField(kind)]: holdOf(kind, key, kv.value.toString()) });
        }
        return holds;
      }),

    setHold: (kind, value) =>
      onAny(targets, deadlineMs, async (etcd, deadline) => {
        const key = holdKey(kind);
        if (value === null) return Number((await etcd.kv.deleteRange({ key }, { deadline: deadline() })).deleted) > 0;
        const put = await etcd.kv.put({ key, value: Buffer.from(JSON.stringify(value)), prev_kv: true }, { deadline: deadline() });
        return put.prev_kv?.value.toString() !== JSON.stringify(value);
      }),
  });

  return {
    at: guardAt,
    close() {
      for (const { client } of clients.values()) client.close();
      clients.clear();
    },
  };
}
