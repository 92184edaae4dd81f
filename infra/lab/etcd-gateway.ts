// The few etcd calls the lab needs, through etcd's grpc-gateway (JSON over HTTP/1.1, etcd 3.4 at
// /v3/...). The gateway prints uint64 ids in decimal; etcdctl and the core carry lowercase hex.
// A member serving TLS with --client-cert-auth answers only with `tls` (the lab's client certificate).
import { requestJson, type ClientTls } from './http-json.ts';

export function decimalIdToHex(decimal: string): string {
  return BigInt(decimal).toString(16);
}

export interface GatewayStatus {
  memberId: string;
  /** etcd's cluster_id from the response header, hex: ground truth for which cluster answered. */
  clusterId: string;
  /** '0' when this member knows no leader. */
  leaderId: string;
  raftTerm: number;
  isLearner: boolean;
}

export interface GatewayMember {
  id: string;
  /** Empty until the member has started and published its name. */
  name: string;
  peerUrls: string[];
  clientUrls: string[];
  isLearner: boolean;
}

interface RawStatus {
  header?: { member_id?: string; cluster_id?: string };
  leader?: string;
  raftTerm?: string;
  isLearner?: boolean;
}

interface RawMember {
  ID?: string;
  name?: string;
  peerURLs?: string[];
  clientURLs?: string[];
  isLearner?: boolean;
}

interface RawMemberList {
  members?: RawMember[];
}

interface RawMemberAdd {
  member?: RawMember;
  members?: RawMember[];
}

function toMember(raw: RawMember): GatewayMember {
  return {
    id: decimalIdToHex(raw.ID ?? '0'),
    name: raw.name ?? '',
    peerUrls: raw.peerURLs ?? [],
    clientUrls: raw.clientURLs ?? [],
    isLearner: raw.isLearner === true,
  };
}

export async function gatewayStatus(baseUrl: string, timeoutMs: number, tls?: ClientTls): Promise<GatewayStatus> {
  const raw = await requestJson<RawStatus>({ baseUrl, path: '/v3/maintenance/status', body: {}, timeoutMs, ...(tls ? { tls } : {}) });
  return {
    memberId: decimalIdToHex(raw.header?.member_id ?? '0'),
    clusterId: decimalIdToHex(raw.header?.cluster_id ?? '0'),
    leaderId: decimalIdToHex(raw.leader ?? '0'),
    raftTerm: Number(raw.raftTerm ?? 0),
    isLearner: raw.isLearner === true,
  };
}

export async function gatewayMemberList(baseUrl: string, timeoutMs: number, tls?: ClientTls): Promise<GatewayMember[]> {
  const raw = await requestJson<RawMemberList>({ baseUrl, path: '/v3/cluster/member/list', body: {}, timeoutMs, ...(tls ? { tls } : {}) });
  return (raw.members ?? []).map(toMember);
}

/** member promote: etcd refuses a learner that has not caught up with the leader yet ("learner member which is not ready"). */
export async function gatewayPromote(baseUrl: string, memberId: string, timeoutMs: number, tls?: ClientTls): Promise<void> {
  await requestJson<unknown>({
    baseUrl,
    path: '/v3/cluster/member/promote',
    body: { ID: BigInt(`0x${memberId}`).toString() },
    timeoutMs,
    ...(tls ? { tls } : {}),
  });
}

export async function gatewayAddLearner(
  baseUrl: string,
  peerUrl: string,
  timeoutMs: number,
  tls?: ClientTls,
): Promise<{ added: GatewayMember; members: GatewayMember[] }> {
  const raw = await requestJson<RawMemberAdd>({
    baseUrl,
    path: '/v3/cluster/member/add',
    body: { peerURLs: [peerUrl], isLearner: true },
    timeoutMs,
    ...(tls ? { tls } : {}),
  });
  if (!raw.member) throw new Error(`member add through ${baseUrl} returned no member`);
  return { added: toMember(raw.member), members: (raw.members ?? []).map(toMember) };
}

/** MoveLeader (etcd answers only on the leader itself: "etcdserver: not leader" elsewhere). */
export async function gatewayMoveLeader(baseUrl: string, targetId: string, timeoutMs: number, tls?: ClientTls): Promise<void> {
  await requestJson<unknown>({
    baseUrl,
    path: '/v3/maintenance/transfer-leadership',
    body: { targetID: BigInt(`0x${targetId}`).toString() },
    timeoutMs,
    ...(tls ? { tls } : {}),
  });
}

export async function gatewayMemberRemove(baseUrl: string, memberId: string, timeoutMs: number, tls?: ClientTls): Promise<void> {
  await requestJson<unknown>({
    baseUrl,
    path: '/v3/cluster/member/remove',
    body: { ID: BigInt(`0x${memberId}`).toString() },
    timeoutMs,
    ...(tls ? { tls } : {}),
  });
}
