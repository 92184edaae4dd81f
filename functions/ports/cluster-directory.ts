// Where a cluster's endpoints, credentials and policy come from.
import type { Policy } from '../core/policy.ts';
import type { TlsFiles } from './etcd.ts';

export interface ClusterEntry {
  clusterId: string;
  /** Client URLs to seed the member list from. */
  endpoints: string[];
  tls?: TlsFiles;
  policy: Policy;
  /** Maps node, machine or instance names to etcd member names, where they differ. */
  aliases?: Record<string, string>;
}

export interface ClusterDirectory {
  /** Throws UnknownClusterError when the cluster is not configured. */
  get(clusterId: string): Promise<ClusterEntry>;
}

export class UnknownClusterError extends Error {
  constructor(clusterId: string) {
    super(`cluster "${clusterId}" is not configured; add it to the cluster directory`);
    this.name = 'UnknownClusterError';
  }
}
