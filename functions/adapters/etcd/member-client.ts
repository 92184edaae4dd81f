// One etcd3 client bound to one member endpoint over one path: one call, one answer, no retries.
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { noop } from 'cockatiel';
import { Etcd3, type IOptions, type ISnapshotResponse } from 'etcd3';
import type { MemberId, MemberInfo, MemberList, MemberStatus } from '../../core/types.ts';
import type { EndpointTarget, EtcdMemberClient, TlsFiles } from '../../ports/etcd.ts';
import { toMemberInfo, toMemberList, toMemberStatus } from './convert.ts';
import { withinDeadline } from './deadline.ts';
import { decimalMemberId } from './member-id.ts';
import { toEtcdCallError } from './normalize-error.ts';

export interface MemberClientOptions {
  /** Used for https endpoints only; plain http endpoints never get TLS. */
  tls?: TlsFiles;
  /** Extra grpc-js channel options, merged over the defaults below. */
  grpcOptions?: IOptions['grpcOptions'];
}

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
  close(): void;
}

export function etcd3Options(endpoint: string, options: MemberClientOptions = {}): IOptions {
  const host = endpoint.replace(/\/+$/, '');
  const secure = host.startsWith('https://');
  return {
    hosts: [host],
    // etcd3 defaults to three global retries and a per-host circuit breaker; both would hide failures.
    faultHandling: { global: noop, host: () => noop },
    grpcOptions: { ...DEFAULT_GRPC_OPTIONS, ...options.grpcOptions },
    ...(secure && options.tls
      ? { credentials: { rootCertificate: options.tls.ca, certChain: options.tls.cert, privateKey: options.tls.key } }
      : {}),
  };
}

async function call<T>(deadlineMs: number, run: (deadline: Date) => Promise<T>): Promise<T> {
  try {
    return await withinDeadline(deadlineMs, run);
  } catch (error) {
    throw toEtcdCallError(error);
  }
}

export function createMemberClient(target: EndpointTarget, options: MemberClientOptions = {}): ClosableMemberClient {
  const etcd = new Etcd3(etcd3Options(target.endpoint, options));
  return {
    endpoint: target.endpoint,
    path: target.path,

    status: (deadlineMs): Promise<MemberStatus> =>
      call(deadlineMs, async (deadline) => toMemberStatus(await etcd.maintenance.status({ deadline }))),

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

    close: () => etcd.close(),
  };
}
