// Shapes shared by the in-process lab, its state file and the lab daemon.
import type { FaultMode } from './fault-proxy.ts';

export interface LabOptions {
  /** 1..7 voting members. */
  members: number;
  /** Defaults to ETCD_BIN, then `etcd` on PATH. */
  etcdBin?: string;
  heartbeatMs?: number;
  electionTimeoutMs?: number;
  /** The lab makes its own temporary directory under this (default: the OS temp dir). */
  dataRoot?: string;
  namePrefix?: string;
  /** Deadline for every member to answer and agree on a leader. */
  startTimeoutMs?: number;
  /** More etcd flags for chosen members, by name (e.g. a small --quota-backend-bytes for one). */
  memberArgs?: Record<string, string[]>;
  /**
   * Client TLS as kubeadm runs etcd (lab-pki.ts): a CA of the lab's own, https client URLs and
   * --client-cert-auth; the lab asks its own questions with a client certificate of that CA.
   * Peers stay plain http on loopback. Off by default.
   */
  tls?: boolean;
  /**
   * A second fault proxy in front of every member's peer (raft) port, which the member advertises
   * as its peer URL, so every connection to a member's raft port goes through it and faultPeer()
   * can cut, blackhole or slow it. Off by default: peers then talk directly.
   */
  peerProxies?: boolean;
}

/** Where a TLS lab keeps its PKI: the CA (the key too) and the lab's own client certificate. */
export interface LabTlsFiles {
  caFile: string;
  caKeyFile: string;
  /** The lab's client certificate (clientAuth), which every member trusts. */
  certFile: string;
  keyFile: string;
}

/** 'heal' is the same as 'pass'. */
export type LabFault = FaultMode | 'heal';

export type MemberRunState = 'running' | 'stopped' | 'killed';

export interface LabMemberRecord {
  readonly name: string;
  /** Lowercase hex without leading zeros, as etcdctl prints it; learned from the cluster. */
  readonly id: string;
  /** The member's fault proxy: what the cluster advertises, and what callers should use. */
  readonly clientUrl: string;
  /** The member's real client port, bypassing the proxy: ground truth for the lab itself. */
  readonly directUrl: string;
  /** The peer URL the cluster knows: the member's peer fault proxy when the lab has peer proxies. */
  readonly peerUrl: string;
  /** The member's real peer port, bypassing any peer proxy (the same as peerUrl without one). */
  readonly directPeerUrl: string;
  readonly pid: number;
  readonly dataDir: string;
  readonly logFile: string;
  readonly isLearner: boolean;
}

export interface LabMemberState extends LabMemberRecord {
  proxyPort: number;
  mode: FaultMode;
  /** Present when the lab has peer proxies. */
  peerProxyPort?: number;
  peerMode?: FaultMode;
  runState: MemberRunState;
}

/** What a later, separate process needs to find and fault a running lab. */
export interface LabState {
  version: 1;
  token: string;
  /** The lab's own temporary directory; every member's data and log live under it. */
  root: string;
  /** The process that owns the etcd children and the proxies. */
  ownerPid: number;
  /** Loopback control endpoint of the lab daemon, when the lab runs inside one. */
  controlUrl?: string;
  heartbeatMs: number;
  electionTimeoutMs: number;
  /** Present when the members serve clients over TLS. */
  tls?: LabTlsFiles;
  members: LabMemberState[];
}

export interface LabMemberInfo {
  id: string;
  /** Empty for a member that was added but has not started yet. */
  name: string;
  peerUrls: string[];
  clientUrls: string[];
  isLearner: boolean;
}
