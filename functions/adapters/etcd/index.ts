// The etcd3-backed transport, the path resolvers and the prober.
export { createEtcd3Transport, type Etcd3TransportOptions } from './transport.ts';
export { createMemberClient, credentialsOf, DEFAULT_GRPC_OPTIONS, type MemberClientOptions } from './member-client.ts';
export { createProber } from './prober.ts';
export { directPaths } from './path-resolvers.ts';
export { normalizeEtcdError, toEtcdCallError } from './normalize-error.ts';
export { decimalMemberId, hexMemberId } from './member-id.ts';
export { createEtcdGuards } from './etcd-guard.ts';
export { createPerClusterEtcd, type ClosableEtcd, type KubeEtcdFactory } from './per-cluster-access.ts';
export { messageOf, metricsUrlOf, scrapeMember } from './metrics-get.ts';
export { tlsFaultOf } from './tls-hint.ts';
export { toMemberInfo, toMemberList, toMemberStatus } from './convert.ts';
export type { ClosableMemberClient } from './member-client.ts';
