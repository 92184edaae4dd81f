// Where a cluster's endpoints, credentials and policy come from.
import type { Policy } from '../core/policy/index.ts';
import type { EtcdUser, TlsFiles } from './etcd.ts';
import type { KubeAccessConfig } from './kube-access.ts';

export interface ClusterEntry {
  clusterId: string;
  /** Client URLs to seed the member list from. */
  endpoints: string[];
  tls?: TlsFiles;
  /** The etcd user every call authenticates as, when the cluster has authentication enabled. */
  auth?: EtcdUser;
  policy: Policy;
  /** Maps node, machine or instance names to etcd member names, where they differ. */
  aliases?: Record<string, string>;
  /** The port-forward and exec relay paths, Node and Machine evidence, and the Machine actuator. */
  kube?: KubeAccessConfig;
  /**
   * Where each member serves /metrics, by member name or id, when not on its client URL (e.g.
   * etcd's --listen-metrics-urls); read by leader hygiene's scrape. A base URL gets /metrics.
   */
  metricsUrls?: Readonly<Record<string, string>>;
}

export interface ClusterDirectory {
  /** Throws UnknownClusterError when the cluster is not configured. */
  get(clusterId: string): Promise<ClusterEntry>;
  /**
   * The registered clusters' ids, for the storm guard: its share is of these, and only their
   * openings count (a state file may hold clusters no longer configured). Cheap: cached where it
   * is read from a table. A directory that cannot tell leaves it out, or answers undefined (a list
   * refused, say), and the guard counts the clusters that ever opened an incident instead.
   */
  registeredClusterIds?(): Promise<readonly string[] | undefined>;
}

export class UnknownClusterError extends Error {
  constructor(clusterId: string) {
    super(`cluster "${clusterId}" is not configured; add it to the cluster directory`);
    this.name = 'UnknownClusterError';
  }
}

/** Where a machine's etcd member lives: what the intake needs to turn a health signal into a report. */
export interface MemberLocation {
  clusterId: string;
  memberName: string;
}

/** The directory's reverse lookups, by the names outside signals use for a machine. */
export interface MemberLookup {
  findByInstance(instanceId: string): Promise<MemberLocation | undefined>;
  findByNode(nodeName: string): Promise<MemberLocation | undefined>;
}

/** Whether a cluster is registered, asked without reading its entry and the secrets it names. */
export interface ClusterRegistry {
  isRegistered(clusterId: string): Promise<boolean>;
}
