// A member client whose connection carries the cluster's etcd credentials of the moment: it is
// made anew, with new material, once a minted certificate is half through its life, and after a
// TLS failure (the CA may have been rotated). A call still running on the old connection ends
// there; the old client closes after it.
import { withTimeout } from '../../lib/with-timeout.ts';
import { EtcdCallError, type EndpointTarget, type TlsFiles } from '../../ports/etcd.ts';
import { createMemberClient, type ClosableMemberClient, type MemberClientOptions } from '../etcd/index.ts';
import type { ConnectionTls, EtcdClientCredentials } from './etcd-credentials.ts';

/** How a failed call is read again before it is reported (the port-forward asks its forward). */
export type Diagnose = (error: EtcdCallError, call: { sinceMs: number; remainingMs: number; secure: boolean }) => Promise<EtcdCallError>;

export interface RenewingClientOptions extends Omit<MemberClientOptions, 'tls'> {
  credentials: EtcdClientCredentials;
  /** The URL to dial, given whether the connection has TLS material (a port-forward's local port). */
  endpoint: (secure: boolean) => Promise<string>;
  /** Whether the connection needs material at all (a plain http client URL does not). */
  needsTls?: boolean;
  diagnose?: Diagnose;
  now?: () => number;
  /** createMemberClient, unless a test watches the connections. */
  connect?: (target: EndpointTarget, options: MemberClientOptions) => ClosableMemberClient;
}

export interface RenewingClient extends ClosableMemberClient {
  /** The URL and TLS files of the connection of the moment, for another client of the same member (the cluster lock's). */
  current(): Promise<{ endpoint: string; tls?: TlsFiles }>;
}

interface Connection {
  client: ClosableMemberClient;
  endpoint: string;
  material: ConnectionTls;
  calls: number;
  retired: boolean;
}

const PLAIN: ConnectionTls = { renewAt: Infinity, advice: () => undefined };

export function createRenewingClient(target: EndpointTarget, options: RenewingClientOptions): RenewingClient {
  const { credentials, endpoint: endpointFor, diagnose, needsTls = true, now = Date.now, connect = createMemberClient, ...memberOptions } = options;
  let current: Connection | undefined;
  let opening: Promise<Connection> | undefined;
  let closed = false;

  const retire = (connection: Connection): void => {
    connection.retired = true;
    if (connection.calls === 0) connection.client.close();
  };

  async function open(): Promise<Connection> {
    const material = needsTls ? await credentials.forConnection() : PLAIN;
    const endpoint = await endpointFor(material.tls !== undefined);
    const client = connect({ endpoint, path: target.path }, { ...memberOptions, ...(material.tls ? { tls: material.tls } : {}) });
    return { client, endpoint, material, calls: 0, retired: false };
  }

  const release = (connection: Connection): void => {
    connection.calls -= 1;
    if (connection.retired && connection.calls === 0) connection.client.close();
  };

  /** The connection of the moment, claimed for one call in the same step that picks it, so no renewal closes it under the call. */
  async function claim(): Promise<Connection> {
    if (current && !current.retired && now() < current.material.renewAt) {
      current.calls += 1;
      return current;
    }
    opening ??= open().finally(() => (opening = undefined));
    const next = await opening;
    if (closed) {
      retire(next);
      throw new EtcdCallError({ kind: 'other', message: `the client of ${target.endpoint} was closed` });
    }
    if (current !== next) {
      if (current && !current.retired) retire(current);
      current = next;
    }
    next.calls += 1;
    return next;
  }

  async function call<T>(deadlineMs: number, run: (client: ClosableMemberClient, remainingMs: number) => Promise<T>): Promise<T> {
    const sinceMs = performance.now();
    const remaining = () => Math.max(0, Math.floor(sinceMs + deadlineMs - performance.now()));
    const claiming = claim();
    let used: Connection;
    try {
      used = await withTimeout(
        deadlineMs,
        () => claiming,
        () =>
          new EtcdCallError({
            kind: 'timeout',
            message: `${target.endpoint}: no connection within the ${deadlineMs} ms deadline (the cluster's etcd CA was not read in time)`,
          }),
      );
    } catch (error) {
      // A connection that comes after the deadline is not this call's.
      claiming.then(release, () => undefined);
      throw error;
    }
    try {
      return await run(used.client, remaining());
    } catch (error) {
      if (!(error instanceof EtcdCallError)) throw error;
      const read = diagnose ? await diagnose(error, { sinceMs, remainingMs: remaining(), secure: used.material.tls !== undefined }) : error;
      if (read.failure.kind !== 'tls') throw read;
      // The next call reads the CA again and connects with new material.
      credentials.refresh();
      if (current === used && !used.retired) retire(used);
      const advice = used.material.advice(read.failure.message);
      return Promise.reject(advice ? new EtcdCallError({ ...read.failure, message: `${read.failure.message} (${advice})` }, { cause: read }) : read);
    } finally {
      release(used);
    }
  }

  return {
    endpoint: target.endpoint,
    path: target.path,
    status: (deadlineMs) => call(deadlineMs, (c, ms) => c.status(ms)),
    memberList: (deadlineMs) => call(deadlineMs, (c, ms) => c.memberList(ms)),
    moveLeader: (id, deadlineMs) => call(deadlineMs, (c, ms) => c.moveLeader(id, ms)),
    memberRemove: (id, deadlineMs) => call(deadlineMs, (c, ms) => c.memberRemove(id, ms)),
    snapshot: (to, deadlineMs) => call(deadlineMs, (c, ms) => c.snapshot(to, ms)),
    checkAdminPermission: (deadlineMs) => call(deadlineMs, (c, ms) => c.checkAdminPermission(ms)),
    // Maintenance, on the connection of the moment as every other call: without them, no member
    // reached through Kubernetes (or by a client URL beside it) could be defragmented or disarmed.
    compact: (revision, deadlineMs) => call(deadlineMs, (c, ms) => maintenanceCall(c, 'compact').call(c, revision, ms)),
    defragment: (deadlineMs) => call(deadlineMs, (c, ms) => maintenanceCall(c, 'defragment').call(c, ms)),
    disarmNoSpace: (deadlineMs) => call(deadlineMs, (c, ms) => maintenanceCall(c, 'disarmNoSpace').call(c, ms)),
    async current() {
      const used = await claim();
      release(used);
      return { endpoint: used.endpoint, ...(used.material.tls ? { tls: used.material.tls } : {}) };
    },
    close() {
      closed = true;
      // Shutting down: calls still running end now, each within its own deadline anyway.
      current?.client.close();
      current = undefined;
    },
  };
}

type MaintenanceCall = 'compact' | 'defragment' | 'disarmNoSpace';

/** The connection's own maintenance call; every gRPC client has them, so a missing one is a bug, said as a failure. */
function maintenanceCall<K extends MaintenanceCall>(client: ClosableMemberClient, name: K): NonNullable<ClosableMemberClient[K]> {
  const found = client[name];
  if (!found) throw new EtcdCallError({ kind: 'other', message: `${client.endpoint}: this connection cannot ${name}` });
  return found;
}
