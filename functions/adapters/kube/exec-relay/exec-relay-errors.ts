// etcdctl's stderr and exit status to the EtcdFailure the etcd3 adapter gives for the same event.
// The text is handed to the etcd adapter's own normalizer, so both paths share one set of rules;
// only what etcdctl says differently from grpc-js is translated here.
import { grpcCode as GRPC, type EtcdFailure } from '../../../core/common/index.ts';
import { normalizeEtcdError } from '../../etcd/index.ts';

/** grpc-go's code names, as etcdctl's zap warning prints them ("rpc error: code = X desc = Y"). */
const GO_CODES: Record<string, number> = {
  Canceled: GRPC.CANCELLED,
  Unknown: GRPC.UNKNOWN,
  InvalidArgument: GRPC.INVALID_ARGUMENT,
  DeadlineExceeded: GRPC.DEADLINE_EXCEEDED,
  NotFound: GRPC.NOT_FOUND,
  AlreadyExists: GRPC.ALREADY_EXISTS,
  PermissionDenied: GRPC.PERMISSION_DENIED,
  ResourceExhausted: GRPC.RESOURCE_EXHAUSTED,
  FailedPrecondition: GRPC.FAILED_PRECONDITION,
  Aborted: GRPC.ABORTED,
  OutOfRange: GRPC.OUT_OF_RANGE,
  Unimplemented: GRPC.UNIMPLEMENTED,
  Internal: GRPC.INTERNAL,
  Unavailable: GRPC.UNAVAILABLE,
  DataLoss: GRPC.DATA_LOSS,
  Unauthenticated: GRPC.UNAUTHENTICATED,
};

const RPC_ERROR = /^rpc error: code = (\w+) desc = ([\s\S]*)$/;
/**
 * etcdctl waits for a ready connection, so a dead socket surfaces as DeadlineExceeded carrying
 * the balancer's last connection error; grpc-js reports the same event as UNAVAILABLE.
 */
const BALANCER_PREFIX = 'latest balancer error: ';
/** `endpoint status` ends with this line; everything else ends with "Error: <err>". */
const STATUS_FAILED = /^Failed to get the status of endpoint \S+ \(([\s\S]*)\)$/;
const ERROR_LINE = /^Error: ([\s\S]*)$/;
/**
 * `move-leader` asks every endpoint for its status and never sends MoveLeader unless one of them
 * leads; aimed at a follower, it says this where etcd would say "not leader".
 */
const NO_LEADER_ENDPOINT = /no leader endpoint given at/;
/** etcdctl cannot read the pod's certificate files: a credentials problem, as a bad certificate is. */
const CERT_FILE = /open \S+\.(crt|key|pem)\b/;

interface GoError {
  code?: number;
  message: string;
}

/** The last gRPC error in etcdctl's zap warnings (one JSON object per line). */
function lastRpcError(lines: string[]): GoError | undefined {
  let found: GoError | undefined;
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const error = typeof parsed === 'object' && parsed !== null && 'error' in parsed ? parsed.error : undefined;
    const rpc = typeof error === 'string' ? RPC_ERROR.exec(error) : null;
    if (!rpc) continue;
    const [, codeName = '', desc = ''] = rpc;
    found = desc.startsWith(BALANCER_PREFIX)
      ? { code: GRPC.UNAVAILABLE, message: desc.slice(BALANCER_PREFIX.length) }
      : { code: GO_CODES[codeName], message: desc };
  }
  return found;
}

/** etcdctl's closing line: the error it exited with. */
function finalError(lines: string[]): string | undefined {
  for (const line of [...lines].reverse()) {
    if (line.startsWith('{')) continue;
    const matched = STATUS_FAILED.exec(line) ?? ERROR_LINE.exec(line);
    if (matched?.[1] !== undefined) return matched[1];
  }
  return undefined;
}

/** Only for a failed run (exit status not 0, or killed by a signal: null). */
export function failureFromStderr(stderr: string, exitCode: number | null): EtcdFailure {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const closing = finalError(lines);
  if (closing !== undefined && NO_LEADER_ENDPOINT.test(closing)) {
    return { kind: 'other', grpcCode: GRPC.FAILED_PRECONDITION, message: 'etcdserver: not leader' };
  }
  const rpc = lastRpcError(lines);
  const fallback = lines.at(-1) ?? `etcdctl ${exitCode === null ? 'was killed by a signal' : `exited with status ${exitCode}`}`;
  const message = rpc?.message ?? closing ?? fallback;
  // A bare Go context error carries no gRPC status; grpc-js would give DEADLINE_EXCEEDED.
  const code = rpc?.code ?? (/deadline exceeded/i.test(message) ? GRPC.DEADLINE_EXCEEDED : undefined);
  const failure = normalizeEtcdError(code === undefined ? { message } : { code, message });
  if (failure.kind === 'other' && !message.includes('etcdserver:') && CERT_FILE.test(message)) return { ...failure, kind: 'tls' };
  return failure;
}
