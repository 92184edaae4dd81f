// The etcd transport port: one client per member and path, every call under its own deadline.
import type { EtcdFailure, HostEvidence, MachineSummary, MemberId, MemberInfo, MemberList, MemberStatus, PathName, ProbeSample } from '../core/common/index.ts';

export interface TlsFiles {
  /** PEM contents, not paths: the edge reads files once. */
  ca: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /**
   * How the user named each file (`--cacert /etc/ca.pem`, `clusters[0].tls.key k.pem`), so a TLS
   * failure at call time says which file to fix. Names only, never contents.
   */
  sources?: { ca: string; cert?: string; key?: string };
}

/** An etcd user and its password, for a cluster with authentication enabled. */
export interface EtcdUser {
  username: string;
  password: string;
}

export interface EndpointTarget {
  endpoint: string;
  path: PathName;
}

/** Thrown by every transport call; carries the failure already normalized. */
export class EtcdCallError extends Error {
  readonly failure: EtcdFailure;
  constructor(failure: EtcdFailure, options?: { cause?: unknown }) {
    super(failure.message, options);
    this.name = 'EtcdCallError';
    this.failure = failure;
  }
}

/** A client bound to one member's endpoint over one path. No retries: one call, one answer. */
export interface EtcdMemberClient extends EndpointTarget {
  status(deadlineMs: number): Promise<MemberStatus>;
  /** With the cluster_id of the answer, so a list is never taken from the wrong cluster unseen. */
  memberList(deadlineMs: number): Promise<MemberList>;
  /** Must be sent to the leader itself; etcd answers "not leader" otherwise. */
  moveLeader(transfereeId: MemberId, deadlineMs: number): Promise<void>;
  memberRemove(id: MemberId, deadlineMs: number): Promise<MemberInfo[]>;
  /** Streams a snapshot of this member's keyspace into `to`. */
  snapshot(to: NodeJS.WritableStream, deadlineMs: number): Promise<void>;
  /**
   * Maintenance (core/maintenance): compacts the cluster's history up to `revision` (a raft
   * proposal, through any member), defragments this member's database (it stalls while it runs),
   * and disarms the NOSPACE alarms (never a CORRUPT one). Over gRPC (direct, port-forward, through Kubernetes too); the exec relay defragments only (its etcdctl's `alarm disarm` would disarm a CORRUPT alarm too).
   */
  compact?(revision: number, deadlineMs: number): Promise<void>;
  defragment?(deadlineMs: number): Promise<void>;
  disarmNoSpace?(deadlineMs: number): Promise<void>;
  /**
   * The endpoint `answer` (a value this client resolved with) came through, when that may be
   * another than `endpoint`: the exec relay tries each etcd pod until one relays. Undefined for
   * an answer it did not give.
   */
  answeredThrough?(answer: object): string | undefined;
  /**
   * Resolves when etcd would let us change its membership (MemberRemove needs admin permission);
   * rejects with etcd's refusal. Changes nothing. A client that cannot ask lacks it.
   */
  checkAdminPermission?(deadlineMs: number): Promise<void>;
}

export interface EtcdTransport {
  /** Clients are cached per endpoint and path. */
  client(target: EndpointTarget): EtcdMemberClient;
  close(): Promise<void>;
}

export interface ProbeRequest {
  /** Endpoints to ask for the member list; usually every known client URL. */
  seeds: string[];
  /** The whole probe finishes within this, however many members are unreachable. */
  deadlineMs: number;
  /** Paths to try for each member. Only 'direct' needs no kube access. */
  paths?: PathName[];
}

export interface Prober {
  probe(request: ProbeRequest): Promise<ProbeSample>;
}

/** Maps a member and a path to the endpoint a client should dial; undefined means "not probed over that path". */
export interface PathResolver {
  resolve(member: MemberInfo, path: PathName): string | undefined;
}

/** What one look at the world beside etcd (the workload cluster) gave a probe. */
export interface PathLook extends PathResolver {
  /** Seeds beside the configured client URLs, e.g. every etcd pod over port-forward. */
  seeds: EndpointTarget[];
  /** Where the member runs, when the look can tell. */
  host?(member: MemberInfo): HostEvidence | undefined;
  /** Why the look failed; the direct path still works without it. */
  failure?: string;
  /** The cluster's control-plane Machines, when the look read them. */
  machines?: MachineSummary[];
}

/** A resolver that must look first, once per probe and within its deadline (the kube paths). */
export interface LookingPathResolver {
  look(paths: readonly PathName[], deadlineMs: number): Promise<PathLook>;
}
