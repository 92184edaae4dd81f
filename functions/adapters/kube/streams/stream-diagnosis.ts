// Why an exec or port-forward stream failed, read from the API server's own answer (texts and
// shapes: shared/notes/kube-paths.md). Every message names the path and the pod, keeps the
// server's text, and ends with what it means, e.g.
//   port-forward to kube-system/etcd-cp-2 failed: error dialing backend: dial tcp 10.0.0.12:10250:
//   connect: connection refused (the kubelet on the pod's node is not responding)
import type { V1Status } from '@kubernetes/client-node';
import { PodStreamError, type PodRef, type StreamFailureCause } from './pod-streams.ts';
import { UpgradeRefused } from './stream-transport.ts';

export type StreamPath = 'exec' | 'port-forward';

type Reach = PodStreamError['reachability'];

/** How a missing binary is said; the classification table reads it (RELAY_BINARY_MISSING). */
export const BINARY_NOT_IN_IMAGE = "is not in the container's image";

/** §1: the API server could not reach the kubelet (pre-upgrade 500, or the v5 translator's dial). */
const KUBELET_DOWN = /error dialing backend|error sending request: .*:10250\b/;
/** §2: the kubelet could not reach its runtime (a gRPC Unavailable on the CRI socket). */
const RUNTIME_DOWN = /containerd|rpc error: code = (?:Unavailable|DeadlineExceeded)/;
/**
 * §4, §6: runc could not start the command, as the CRI reports it inside an InternalError: a bare
 * name not on the image's PATH, or a path that is not there (runc: `exec: "<path>": stat <path>: no
 * such file or directory`; older runc says "starting container process caused").
 */
const BINARY_MISSING =
  /(?:unable to start container process|starting container process caused): (?:exec: "([^"]+)": )?(?:executable file not found in \$PATH|stat (\S+?): no such file or directory)/;
const TLS_CODE = /^ERR_TLS_|^ERR_SSL_|CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;
/** Socket errors that mean no HTTP answer came from the API server (not, say, an auth plugin's spawn error). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN']);

function failure(path: StreamPath, pod: PodRef, text: string, meaning: string, why: StreamFailureCause, reach: Reach, status?: number): PodStreamError {
  const where = path === 'exec' ? `exec in ${pod.namespace}/${pod.name}` : `port-forward to ${pod.namespace}/${pod.name}`;
  return new PodStreamError(`${where} failed: ${text.trim()} (${meaning})`, why, reach, status);
}

const kubeletDown = (path: StreamPath, pod: PodRef, text: string, status?: number) =>
  failure(path, pod, text, "the kubelet on the pod's node is not responding", 'kubelet-down', 'refused', status);
const runtimeDown = (path: StreamPath, pod: PodRef, text: string, status?: number) =>
  failure(path, pod, text, "containerd on the pod's node is down", 'containerd-down', 'refused', status);

interface StatusBody {
  message: string;
  detailsName?: string;
}

/** A JSON Status body (kind Status, or anything JSON with a message); undefined for plain text. */
function parseStatus(body: string): StatusBody | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || !('message' in parsed) || typeof parsed.message !== 'string') return undefined;
  const details = 'details' in parsed && typeof parsed.details === 'object' && parsed.details !== null ? parsed.details : {};
  const name = 'name' in details && typeof details.name === 'string' ? details.name : undefined;
  return { message: parsed.message, ...(name === undefined ? {} : { detailsName: name }) };
}

/** A refusal before the upgrade: the HTTP status and body the API server (or kubelet) wrote. */
export function diagnoseRefusal(path: StreamPath, pod: PodRef, refused: UpgradeRefused): PodStreamError {
  const code = refused.status;
  const status = parseStatus(refused.body);
  const text = status?.message ?? (refused.body.trim() || `HTTP ${code} with no body`);
  if (code === 500 && status && text.startsWith('error dialing backend')) return kubeletDown(path, pod, text, code);
  if (code === 500 && !status && (text.includes('rpc error') || text.includes('containerd'))) return runtimeDown(path, pod, text, code);
  if (code === 404 && status?.detailsName !== undefined && status.detailsName !== pod.name) {
    // §3: the Node GET runs under the pod request's RequestInfo, so the 404 says `pods "<node>"`.
    return failure(
      path,
      pod,
      text,
      `the pod's node ${status.detailsName} is gone; the pod object outlives it until PodGC removes it`,
      'node-gone',
      'refused',
      code,
    );
  }
  if (code === 404 && (status?.detailsName === pod.name || text.includes('pod does not exist')))
    return failure(path, pod, text, 'the pod is gone', 'pod-gone', 'refused', code);
  if (code === 403) {
    return failure(path, pod, text, 'RBAC: the identity needs both get and create on pods/exec and pods/portforward', 'forbidden', 'auth', code);
  }
  if (code === 401) return failure(path, pod, text, 'the API server did not accept the credentials', 'other', 'auth', code);
  return failure(path, pod, text, `HTTP ${code} before the upgrade`, 'other', 'other', code);
}

/** Why the stream did not open: a refusal, no HTTP answer at all, or something else. */
export function diagnoseConnectError(path: StreamPath, pod: PodRef, error: unknown): PodStreamError {
  if (error instanceof UpgradeRefused) return diagnoseRefusal(path, pod, error);
  if (error instanceof PodStreamError) return error;
  const text = error instanceof Error ? error.message : String(error);
  const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : '';
  if (text === 'Opening handshake has timed out')
    return failure(path, pod, text, 'the API server accepted the connection but did not answer the upgrade', 'timeout', 'timeout');
  if (TLS_CODE.test(code)) return failure(path, pod, text, 'TLS with the API server failed', 'api-unreachable', 'tls');
  if (code === 'ETIMEDOUT') return failure(path, pod, text, 'the API server did not answer', 'api-unreachable', 'timeout');
  if (NETWORK_CODES.has(code)) return failure(path, pod, text, 'the API server did not answer', 'api-unreachable', 'refused');
  return failure(path, pod, text, 'the stream did not open', 'other', 'other');
}

/**
 * The exit code a channel-3 Status carries: 0 for Success, the ExitCode cause for
 * NonZeroExitCode (null if it has none); undefined when the Status is not about the command's exit.
 */
export function exitCodeOf(status: V1Status): number | null | undefined {
  if (status.status === 'Success') return 0;
  if (status.reason !== 'NonZeroExitCode') return undefined;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const code = Number(cause?.message);
  return cause && Number.isInteger(code) ? code : null;
}

/** A channel-3 Failure that is not an exit code: the exec itself failed (v5 translator, §1, §2, §4). */
export function diagnoseExecStatus(pod: PodRef, status: V1Status): PodStreamError {
  const text = status.message ?? JSON.stringify(status);
  if (KUBELET_DOWN.test(text)) return kubeletDown('exec', pod, text);
  const missing = BINARY_MISSING.exec(text);
  // Before RUNTIME_DOWN: the runtime answered, and its text may name a socket path too.
  if (missing) return failure('exec', pod, text, `${missing[1] ?? missing[2] ?? 'the command'} ${BINARY_NOT_IN_IMAGE}`, 'binary-missing', 'other');
  if (RUNTIME_DOWN.test(text)) return runtimeDown('exec', pod, text);
  return failure('exec', pod, text, `the exec did not run${status.reason ? `: ${status.reason}` : ''}`, 'other', 'other');
}

/** Text on a port-forward error channel after the upgrade (§2b). */
export function diagnoseErrorChannel(pod: PodRef, port: number, text: string): PodStreamError {
  if (text.includes('connection refused')) return failure('port-forward', pod, text, `nothing listens on port ${port} in the pod`, 'not-listening', 'refused');
  return failure('port-forward', pod, text, `the pod side of port ${port} failed`, 'other', 'other');
}

export function execTimeout(pod: PodRef, deadlineMs: number): PodStreamError {
  return failure('exec', pod, `no exit status within ${deadlineMs} ms`, 'the deadline ran out; the stream was closed', 'timeout', 'timeout');
}

export function execClosed(pod: PodRef, why: string): PodStreamError {
  return failure('exec', pod, why, 'the stream ended without an exit status', 'other', 'other');
}

/** The caller closed the PodStreams while this was still running, or before it started. */
export function streamsClosed(path: StreamPath, pod: PodRef): PodStreamError {
  return failure(path, pod, 'the pod streams were closed', 'closed by the caller', 'other', 'other');
}
