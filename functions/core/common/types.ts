// The vocabulary every decision speaks. Pure data: no I/O, no classes.

/**
 * How we reach a member's etcd client API: the one list every schema and check reads. Order of
 * preference is policy.
 */
export const PATH_NAMES = ['direct', 'port-forward', 'exec-relay'] as const;
export type PathName = (typeof PATH_NAMES)[number];

/** The paths that go through Kubernetes: what kube access makes possible beside the direct one. */
export const KUBE_PATHS: readonly PathName[] = ['port-forward', 'exec-relay'];

/** What one call over one path told us about reachability. */
export type Reachability = 'ok' | 'refused' | 'timeout' | 'tls' | 'auth' | 'other';

/** Member ids are uint64; we carry them as lowercase hex without leading zeros, as etcdctl prints them. */
export type MemberId = string;

/**
 * etcd's own cluster_id, from every response header: uint64, carried as hex like member ids. Not
 * the cluster's name in the directory (`clusterId` of events), which a person chose.
 */
export type EtcdClusterId = string;

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
  /** Bytes of the database logically in use (etcd 3.4 on); dbSize less this is free pages a defragmentation returns. */
  dbSizeInUse?: number;
  isLearner: boolean;
  /**
   * Alarms this member reports for other members (etcd lists every active alarm of the cluster in
   * each Status): a NOSPACE raised by a member that is down still refuses every write.
   */
  othersAlarms?: { member: MemberId; alarm: string }[];
  /** The keyspace revision this member answered at (its answer's header): where a compaction may go. */
  revision?: number;
  /** The cluster_id this member answered with. Absent only in views kept before ids were recorded. */
  clusterId?: EtcdClusterId;
}

/** A member list, and the cluster_id of the member that gave it. */
export interface MemberList {
  clusterId: EtcdClusterId;
  members: MemberInfo[];
}

/** One endpoint's answer, reduced to which cluster it belongs to. */
export interface IdentityReport {
  endpoint: string;
  clusterId: EtcdClusterId;
}

/** One member as one probe saw it. */
/** A control-plane Machine of the cluster, as the management cluster lists it. */
export interface MachineSummary {
  name: string;
  /** status.nodeRef.name: unset until its Node joined. */
  nodeName?: string;
  deleting: boolean;
  /** metadata.uid: a replacement given the same name has another, so only this one is deleted. */
  uid?: string;
}

/** Where a member runs, as the workload cluster (and Cluster API) says; only with kube access. */
export interface HostEvidence {
  /** Its Node's name: from its etcd pod, or matched by name or InternalIP. */
  node?: string;
  /** False when the Node list answered without it (or no Node could be matched at all). */
  nodeExists: boolean;
  /** Its Node is cordoned (spec.unschedulable): being drained, or about to be. */
  cordoned?: boolean;
  /** Its etcd pod, `namespace/name`. */
  pod?: string;
  /**
   * Its Cluster API Machine, by status.nodeRef; only with management cluster access. `outdated`:
   * its UpToDate condition is False, so the control plane's rollout replaces it next.
   */
  machine?: { name: string; deleting: boolean; outdated?: boolean };
}

export interface MemberProbe {
  member: MemberInfo;
  paths: PathProbe[];
  host?: HostEvidence;
  /** From the first path that answered. */
  status?: MemberStatus;
}

/** Everything one probe of a cluster saw, at one instant. */
export interface ProbeSample {
  at: number;
  members: MemberProbe[];
  /** Member-list failures per seed endpoint, when no seed answered. */
  listFailures: PathProbe[];
  /**
   * Every seed that answered (its member list or its status) and the cluster_id it answered
   * with. Seeds of more than one cluster leave `members` empty: no list is "the" cluster's.
   */
  seeds: IdentityReport[];
  /** The seed whose member list `members` is, with that list's cluster_id. */
  listedBy?: IdentityReport;
  /** Why the kube paths could not be resolved (e.g. the workload API server did not answer). */
  pathLookFailure?: string;
  /** The cluster's control-plane Machines, when the management cluster was read. */
  machines?: MachineSummary[];
}

export const NO_LEADER: MemberId = '0';
