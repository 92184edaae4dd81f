// The vocabulary every decision speaks. Pure data: no I/O, no classes.

/** How we reach a member's etcd client API. Order of preference is policy. */
export type PathName = 'direct' | 'port-forward' | 'exec';

/** What one call over one path told us about reachability. */
export type Reachability = 'ok' | 'refused' | 'timeout' | 'tls' | 'auth' | 'other';

/** Member ids are uint64; we carry them as lowercase hex without leading zeros, as etcdctl prints them. */
export type MemberId = string;

/** An etcd error, normalized by the transport so the core never sees a transport-specific shape. */
export interface EtcdFailure {
  kind: Exclude<Reachability, 'ok'>;
  /** gRPC status code when the failure came from a gRPC status. */
  grpcCode?: number;
  /** etcd's own message, e.g. "etcdserver: not leader", or the socket error. */
  message: string;
}

export interface MemberInfo {
  id: MemberId;
  /** Empty when the member was added but never started. */
  name: string;
  clientUrls: string[];
  peerUrls: string[];
  isLearner: boolean;
}

export interface PathProbe {
  path: PathName;
  endpoint: string;
  reachability: Reachability;
  latencyMs: number;
  failure?: EtcdFailure;
}

export interface MemberStatus {
  /** The leader as this member sees it; '0' means "no leader". */
  leaderId: MemberId;
  raftTerm: number;
  raftIndex: number;
  raftAppliedIndex: number;
  alarms: string[];
  errors: string[];
  version: string;
  dbSize: number;
  isLearner: boolean;
}

/** One member as one probe saw it. */
export interface MemberProbe {
  member: MemberInfo;
  paths: PathProbe[];
  /** From the first path that answered. */
  status?: MemberStatus;
}

/** Everything one probe of a cluster saw, at one instant. */
export interface ProbeSample {
  at: number;
  members: MemberProbe[];
  /** Member-list failures per seed endpoint, when no seed answered. */
  listFailures: PathProbe[];
}

export const NO_LEADER: MemberId = '0';
