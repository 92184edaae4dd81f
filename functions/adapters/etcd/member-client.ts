// One etcd3 client bound to one member endpoint over one path: one call, one answer, no retries.
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Channel, type ClientOptions } from '@grpc/grpc-js';
import { noop } from 'cockatiel';
import { AlarmAction, AlarmType, Etcd3, type IOptions, type ISnapshotResponse } from 'etcd3';
import type { MemberId, MemberInfo, MemberList, MemberStatus } from '../../core/common/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import { EtcdCallError, type EndpointTarget, type EtcdMemberClient, type EtcdUser, type TlsFiles } from '../../ports/etcd.ts';
import { tokenInterceptor } from './auth-token.ts';
import { toMemberInfo, toMemberList, toMemberStatus } from './convert.ts';
import { withinDeadline } from './deadline.ts';
import { decimalMemberId } from './member-id.ts';
import { toEtcdCallError } from './normalize-error.ts';
import { endpointTlsCredentials } from './tls-credentials.ts';
import { tlsHint } from './tls-hint.ts';

export interface MemberClientOptions {
  /** Used for https endpoints only; plain http endpoints never get TLS. */
  tls?: TlsFiles;
  /** The etcd user every call authenticates as (a cluster with authentication enabled). */
  auth?: EtcdUser;
  /** Extra grpc-js channel options, merged over the defaults below. */
  grpcOptions?: IOptions['grpcOptions'];
}

/** A cluster's credentials as client options: its TLS files and its etcd user, where it has them. */
export const credentialsOf = (cluster: Pick<ClusterEntry, 'tls' | 'auth'>): MemberClientOptions => ({
  ...(cluster.tls ? { tls: cluster.tls } : {}),
  ...(cluster.auth ? { auth: cluster.auth } : {}),
});

/**
 * Channel defaults: no transparent gRPC retries, short reconnect backoff, and a private subchannel pool
 * so one endpoint's backoff state is never shared with (and never hides a healed endpoint from) another client.
 */
export const DEFAULT_GRPC_OPTIONS: NonNullable<IOptions['grpcOptions']> = {
  'grpc.enable_retries': 0,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.use_local_subchannel_pool': 1,
};

export interface ClosableMemberClient extends EtcdMemberClient {
  checkAdminPermission(deadlineMs: number): Promise<void>;
  close(): void;
}

export function etcd3Options(endpoint: string, options: MemberClientOptions = {}): IOptions {
  const host = endpoint.replace(/\/+$/, '');
  const secure = host.startsWith('https://');
  return {
    hosts: [host],
    // etcd3 defaults to three global retries and a per-host circuit breaker; both would hide failures.
    faultHandling: { global: noop, host: () => noop },
    grpcOptions: {
      ...DEFAULT_GRPC_OPTIONS,
      ...options.grpcOptions,
      ...(secure ? tlsChannel(host, options.tls) : {}),
      ...(options.auth ? authenticated(host, options) : {}),
    },
    ...(secure && options.tls ? { credentials: { rootCertificate: options.tls.ca, certChain: options.tls.cert, privateKey: options.tls.key } } : {}),
  };
}

/** Every channel of the client with our TLS credentials, which send no server name for an IP host. */
function tlsChannel(endpoint: string, tls: TlsFiles | undefined): ClientOptions {
  const credentials = endpointTlsCredentials(endpoint, tls);
  return { channelFactoryOverride: (address, _credentials, channelOptions) => new Channel(address, credentials, channelOptions) };
}

/** A token on every call; it is fetched through a client of its own, built as this one is, then closed. */
function authenticated(endpoint: string, options: MemberClientOptions): ClientOptions {
  const user = options.auth!;
  const { auth: _auth, ...unauthenticated } = options;
  const authenticate = async (deadline: Date): Promise<string> => {
    const etcd = new Etcd3(etcd3Options(endpoint, unauthenticated));
    try {
      return (await etcd.auth.authenticate({ name: user.username, password: user.password }, { deadline })).token;
    } finally {
      etcd.close();
    }
  };
  return { interceptors: [tokenInterceptor(user, authenticate)] };
}

async function callNaming<T>(tls: TlsFiles | undefined, deadlineMs: number, run: (deadline: Date) => Promise<T>): Promise<T> {
  try {
    return await withinDeadline(deadlineMs, run);
  } catch (error) {
    const wrapped = toEtcdCallError(error);
    const { failure } = wrapped;
    if (failure.kind !== 'tls' || !tls?.sources) throw wrapped;
    return Promise.reject(
      new EtcdCallError({ ...failure, message: `${failure.message} (${tlsHint(failure.message, tls.sources, tls.ca)})` }, { cause: error }),
    );
  }
}

export function createMemberClient(target: EndpointTarget, options: MemberClientOptions = {}): ClosableMemberClient {
  const call = <T>(deadlineMs: number, run: (deadline: Date) => Promise<T>): Promise<T> =>
    callNaming(target.endpoint.startsWith('https://') ? options.tls : undefined, deadlineMs, run);
  const etcd = new Etcd3(etcd3Options(target.endpoint, options));
  return {
    endpoint: target.endpoint,
    path: target.path,

    status: (deadlineMs): Promise<MemberStatus> => call(deadlineMs, async (deadline) => toMemberStatus(await etcd.maintenance.status({ deadline }))),

    memberList: (deadlineMs): Promise<MemberList> =>
      call(deadlineMs, async (deadline) =>
        // Serializable (etcd's default): a member cut off from quorum still says what it knows.
        toMemberList(await etcd.cluster.memberList({}, { deadline })),
      ),

    moveLeader: (transfereeId: MemberId, deadlineMs): Promise<void> =>
      call(deadlineMs, async (deadline) => {
        await etcd.maintenance.moveLeader({ targetID: decimalMemberId(transfereeId) }, { deadline });
      }),

    memberRemove: (id: MemberId, deadlineMs): Promise<MemberInfo[]> =>
      call(deadlineMs, async (deadline) => {
        const { members } = await etcd.cluster.memberRemove({ ID: decimalMemberId(id) }, { deadline });
        return members.map(toMemberInfo);
      }),

    snapshot: (to, deadlineMs): Promise<void> =>
      call(deadlineMs, async (deadline) => {
        // etcd3 types the stream narrowly; at runtime it is a grpc-js object-mode Readable.
        const source = (await etcd.maintenance.snapshot({ deadline })) as unknown as Readable;
        await pipeline(
          source,
          async function* blobs(chunks: AsyncIterable<ISnapshotResponse>) {
            for await (const chunk of chunks) yield chunk.blob;
          },
          to,
        );
      }),

    compact: (revision, deadlineMs): Promise<void> =>
      call(deadlineMs, async (deadline) => {
        // physical: answered once the compaction is applied to the backend, not only proposed.
        await etcd.kv.compact({ revision: String(revision), physical: true }, { deadline });
      }),

    defragment: (deadlineMs): Promise<void> =>
      call(deadlineMs, async (deadline) => {
        await etcd.maintenance.defragment({ deadline });
      }),

    // As etcdctl alarm disarm, but NOSPACE alone: a CORRUPT alarm is a person's to clear, never ours.
    disarmNoSpace: (deadlineMs): Promise<void> =>
      call(deadlineMs, async (deadline) => {
        const { alarms } = await etcd.maintenance.alarm({ action: AlarmAction.Get, memberID: '0', alarm: AlarmType.None }, { deadline });
        for (const { memberID, alarm } of alarms.filter((a) => a.alarm === 'Nospace'))
          await etcd.maintenance.alarm({ action: AlarmAction.Deactivate, memberID, alarm }, { deadline });
      }),

    // RoleList needs the admin permission MemberRemove needs (etcd checks both with
    // IsAdminPermitted, which passes when auth is off) and changes no key: a faithful dry run.
    checkAdminPermission: (deadlineMs): Promise<void> =>
      call(deadlineMs, async (deadline) => {
        await etcd.auth.roleList({ deadline });
      }),

    close: () => etcd.close(),
  };
}
