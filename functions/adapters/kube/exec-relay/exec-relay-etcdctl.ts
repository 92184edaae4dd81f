// The exec relay's etcdctl: the argv to run inside a healthy member's etcd pod, aimed at the
// target's client URL, and the parsers that turn etcdctl's output into the etcd3 adapter's
// vocabulary. Pure: the exec itself lives elsewhere.
//
// ETCDCTL_API: etcdctl 3.4 and later speak v3 by default (checked against 3.4.23: `endpoint
// status` works with the variable unset), and kubeadm has shipped etcd >= 3.4 since Kubernetes
// 1.17. An exec carries no environment, and the etcd images since 3.5.x-0 are distroless (no
// sh, no env), so the default argv starts with etcdctl itself, by its path; `withApiV3Env` prefixes
// `env ETCDCTL_API=3` for older images that have coreutils. `sh -c` is avoided: it needs a shell
// and quoting.
import type { IStatusResponse } from 'etcd3';
import type { EtcdFailure, MemberId, MemberStatus } from '../../../core/common/index.ts';
import { KUBEADM_ETCD_TLS } from '../../../core/kubernetes/index.ts';
import { toMemberStatus } from '../../etcd/index.ts';
import { failureFromStderr } from './exec-relay-errors.ts';
import { decimalField, headerOf, isObject, parseJsonNumbersAsText, stringField, type JsonObject } from './exec-relay-json.ts';

export { failureFromStderr } from './exec-relay-errors.ts';

/**
 * Where kubeadm's etcd image keeps etcdctl, in both its lineages (Kubernetes-built and upstream
 * etcd's, kube-paths.md §6); the exec runs it by path, as argv, since neither needs a shell or PATH.
 */
export const KUBEADM_ETCDCTL = '/usr/local/bin/etcdctl';

export { KUBEADM_ETCD_TLS };

export interface EtcdctlTlsPaths {
  cacert: string;
  cert: string;
  key: string;
}

export interface RelayCall {
  /** The target member's client URL, e.g. https://10.0.0.12:2379. */
  endpoint: string;
  /** etcdctl's --command-timeout: the call itself, after the dial. */
  commandTimeoutMs: number;
  /** etcdctl's --dial-timeout. */
  dialTimeoutMs: number;
  /** Paths inside the pod; kubeadm's by default, null for a plain-http member (the lab). */
  tls?: EtcdctlTlsPaths | null;
  /** The etcdctl inside the pod; KUBEADM_ETCDCTL by default. */
  binary?: string;
}

function millis(name: string, value: number): string {
  if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive whole number of ms, not ${value}`);
  return `${value}ms`;
}

export function globalFlags(call: RelayCall): string[] {
  if (!/^https?:\/\/[^\s,]+$/.test(call.endpoint)) throw new RangeError(`not a single http(s) client URL: ${call.endpoint}`);
  const tls = call.tls === undefined ? KUBEADM_ETCD_TLS : call.tls;
  return [
    call.binary ?? KUBEADM_ETCDCTL,
    `--endpoints=${call.endpoint}`,
    ...(tls === null ? [] : [`--cacert=${tls.cacert}`, `--cert=${tls.cert}`, `--key=${tls.key}`]),
    `--dial-timeout=${millis('dialTimeoutMs', call.dialTimeoutMs)}`,
    `--command-timeout=${millis('commandTimeoutMs', call.commandTimeoutMs)}`,
    '-w',
    'json',
  ];
}

export const endpointStatusArgv = (call: RelayCall): string[] => [...globalFlags(call), 'endpoint', 'status'];

/** `move-leader` must reach the leader itself: aim it at the leader's client URL. */
export function moveLeaderArgv(call: RelayCall, transfereeId: MemberId): string[] {
  // etcdctl reads the id with strconv.ParseUint(id, 16, 64).
  if (!/^[0-9a-f]{1,16}$/.test(transfereeId)) throw new RangeError(`not a hex member id: ${transfereeId}`);
  return [...globalFlags(call), 'move-leader', transfereeId];
}

/** For etcd images older than 3.4 that still have coreutils: set the API through `env`. */
export const withApiV3Env = (argv: string[]): string[] => ['env', 'ETCDCTL_API=3', ...argv];

/** A parser's failure rather than its value: no parsed shape (status, list, outcome) has a `kind`. */
export const isEtcdFailure = <T extends object>(value: T | EtcdFailure): value is EtcdFailure => 'kind' in value;

const unreadable = (what: string, detail: string): EtcdFailure => ({ kind: 'other', message: `unreadable etcdctl ${what} output: ${detail}` });

/** Go's Status JSON, as the etcd3 adapter would have received it (uint64s as decimal text). */
function toStatusResponse(status: JsonObject): IStatusResponse {
  const errors = status['errors'] ?? [];
  if (!Array.isArray(errors) || !errors.every((e): e is string => typeof e === 'string')) throw new TypeError('errors is not a list of strings');
  return {
    header: headerOf(status['header']),
    version: stringField(status, 'version'),
    dbSize: decimalField(status, 'dbSize'),
    leader: decimalField(status, 'leader'),
    raftIndex: decimalField(status, 'raftIndex'),
    raftTerm: decimalField(status, 'raftTerm'),
    raftAppliedIndex: decimalField(status, 'raftAppliedIndex'),
    errors,
    dbSizeInUse: decimalField(status, 'dbSizeInUse'),
    isLearner: status['isLearner'] === true,
  };
}

/** `endpoint status -w json` for one endpoint: `[{"Endpoint": ..., "Status": {...}}]`. */
export function parseEndpointStatus(stdout: string, stderr: string, exitCode: number | null): MemberStatus | EtcdFailure {
  if (exitCode !== 0) return failureFromStderr(stderr, exitCode);
  try {
    const parsed = parseJsonNumbersAsText(stdout);
    if (!Array.isArray(parsed) || parsed.length !== 1) return unreadable('endpoint status', `expected one endpoint, got ${stdout.trim()}`);
    const [entry] = parsed as unknown[];
    if (!isObject(entry) || !isObject(entry['Status'])) return unreadable('endpoint status', stdout.trim());
    // The same conversion as the etcd3 adapter: hex ids, alarms attributed to the member they name.
    return toMemberStatus(toStatusResponse(entry['Status']));
  } catch (error) {
    return unreadable('endpoint status', error instanceof Error ? error.message : String(error));
  }
}

export interface MoveLeaderOutcome {
  moved: true;
}

/** `move-leader` prints the (empty) response on success; only its exit status matters. */
export function parseMoveLeader(_stdout: string, stderr: string, exitCode: number | null): MoveLeaderOutcome | EtcdFailure {
  return exitCode === 0 ? { moved: true } : failureFromStderr(stderr, exitCode);
}

/**
 * `defrag` of the one member the URL names (its own database: it stalls while it runs). Compaction
 * and disarm go through any member, so they stay on gRPC paths: etcdctl's `alarm disarm` would
 * disarm every alarm, a CORRUPT one too.
 */
export const defragArgv = (call: RelayCall): string[] => [...globalFlags(call), 'defrag'];

export interface DefragOutcome {
  defragmented: true;
}

/** `defrag` prints "Finished defragmenting etcd member[...]" on success; only its exit status matters. */
export function parseDefrag(_stdout: string, stderr: string, exitCode: number | null): DefragOutcome | EtcdFailure {
  return exitCode === 0 ? { defragmented: true } : failureFromStderr(stderr, exitCode);
}
