// The flags that name a cluster and how to talk to it, shared by probe, plan and remediate, and
// their translation into a cluster entry with its policy.
import fs from 'node:fs';
import { electionTimeoutTooShort, MIN_ELECTION_TIMEOUT_MS, parsePolicy, type Policy, type PolicyInput } from '../../../functions/core/policy.ts';
import type { ClusterEntry } from '../../../functions/ports/cluster-directory.ts';
import type { TlsFiles } from '../../../functions/ports/etcd.ts';
import { durationFlag, requiredFlag, UsageError } from './args.ts';

export const clusterOptions = {
  endpoints: { type: 'string' },
  cluster: { type: 'string' },
  timeout: { type: 'string' },
  'election-timeout': { type: 'string' },
  cacert: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const clusterHelp = `  --endpoints URL[,URL…]   client URLs to ask for the member list (required)
  --cluster ID             the cluster's name in state and events (default: default)
  --timeout DUR            deadline of each etcd call (default: 2s)
  --election-timeout DUR   the cluster's --election-timeout, at least 100ms (default: 1s, etcd's default)
  --cacert F --cert F --key F   TLS: CA bundle, and client certificate and key for mTLS
  --json                   print JSON instead of text`;

type ClusterFlagValues = { [K in keyof typeof clusterOptions]?: (typeof clusterOptions)[K]['type'] extends 'boolean' ? boolean : string };

/** An etcd client URL: http or https, with an explicit port. Flags and config files agree on it. */
export function isClientUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.port !== '';
  } catch {
    return false;
  }
}

export function parseEndpoints(value: string | undefined): string[] {
  const list = requiredFlag('endpoints', value, 'http://127.0.0.1:2379').split(',').map((e) => e.trim()).filter(Boolean);
  if (list.length === 0) throw new UsageError('--endpoints: give at least one URL, e.g. http://127.0.0.1:2379');
  const bad = list.find((endpoint) => !isClientUrl(endpoint));
  if (bad !== undefined) throw new UsageError(`--endpoints: ${JSON.stringify(bad)} is not a client URL (use e.g. http://127.0.0.1:2379)`);
  return list;
}

function readFileFlag(name: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new UsageError(`--${name}: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export function tlsFromFlags(values: { cacert?: string | undefined; cert?: string | undefined; key?: string | undefined }): TlsFiles | undefined {
  const { cacert, cert, key } = values;
  if (cacert === undefined && cert === undefined && key === undefined) return undefined;
  if (cacert === undefined) throw new UsageError('--cacert is required with --cert and --key');
  if ((cert === undefined) !== (key === undefined)) throw new UsageError(cert === undefined ? '--cert is required with --key' : '--key is required with --cert');
  const tls: TlsFiles = { ca: readFileFlag('cacert', cacert) };
  if (cert !== undefined && key !== undefined) {
    tls.cert = readFileFlag('cert', cert);
    tls.key = readFileFlag('key', key);
  }
  return tls;
}

/** The cluster entry the flags describe; `extra` adds command-specific policy (grace, …). */
export function clusterFromFlags(values: ClusterFlagValues, extra: PolicyInput = {}): ClusterEntry & { policy: Policy } {
  const endpoints = parseEndpoints(values.endpoints);
  const callTimeoutMs = durationFlag('timeout', values.timeout) ?? 2_000;
  const electionTimeoutMs = durationFlag('election-timeout', values['election-timeout']) ?? 1_000;
  if (callTimeoutMs === 0) throw new UsageError('--timeout: must be more than 0');
  if (electionTimeoutMs < MIN_ELECTION_TIMEOUT_MS) throw new UsageError(`--election-timeout: ${electionTimeoutTooShort}`);
  const clusterId = values.cluster ?? 'default';
  if (clusterId.trim() === '') throw new UsageError('--cluster: must not be empty');
  const tls = tlsFromFlags(values);
  // The CLI has no kube access, so the only path it can take to a member is its client URL.
  const policy = parsePolicy({ callTimeoutMs, electionTimeoutMs, pathOrder: ['direct'], ...extra });
  return { clusterId, endpoints, policy, ...(tls ? { tls } : {}) };
}
