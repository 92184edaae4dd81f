// Turns whatever etcd3 / grpc-js / the socket threw into one EtcdFailure.
// Pure: the classification table downstream matches on etcd's own message, so that text is kept verbatim.
// The one table of gRPC codes; aliased, since `grpcCode` below is the code a failure carries.
import { AUTH_FAILURE_MESSAGES, grpcCode as GRPC, type EtcdFailure } from '../../core/common/index.ts';
import { EtcdCallError } from '../../ports/etcd.ts';

/** grpc-js formats every status error as "<code> <NAME>: <details>"; etcd3 keeps that text when it re-types the error. */
const GRPC_PREFIX = /^(\d{1,2}) [A-Z_]+: /;

/** etcd3 re-creates gRPC errors as its own classes and drops `code`; the class still tells the code. */
const ETCD3_CLASS_CODES: Record<string, number> = {
  GRPCCancelledError: GRPC.CANCELLED,
  GRPCUnknownError: GRPC.UNKNOWN,
  GRPCInvalidArgumentError: GRPC.INVALID_ARGUMENT,
  GRPCDeadlineExceededError: GRPC.DEADLINE_EXCEEDED,
  GRPCNotFoundError: GRPC.NOT_FOUND,
  GRPCAlreadyExistsError: GRPC.ALREADY_EXISTS,
  EtcdPermissionDeniedError: GRPC.PERMISSION_DENIED,
  GRPCResourceExhastedError: GRPC.RESOURCE_EXHAUSTED,
  GRPCFailedPreconditionError: GRPC.FAILED_PRECONDITION,
  GRPCAbortedError: GRPC.ABORTED,
  GRPCOutOfRangeError: GRPC.OUT_OF_RANGE,
  GRPCNotImplementedError: GRPC.UNIMPLEMENTED,
  GRPCInternalError: GRPC.INTERNAL,
  GRPCUnavailableError: GRPC.UNAVAILABLE,
  GRPCDataLossError: GRPC.DATA_LOSS,
  GRPCUnauthenticatedError: GRPC.UNAUTHENTICATED,
};

const AUTH_CLASSES = new Set(['EtcdAuthenticationFailedError', 'EtcdInvalidAuthTokenError', 'EtcdPermissionDeniedError', 'GRPCUnauthenticatedError']);

const AUTH_MESSAGE = new RegExp(`etcdserver: (${AUTH_FAILURE_MESSAGES.map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'i');
const TLS_MESSAGE =
  /certificate|handshake|self[- ]signed|unable to (get|verify)|altnames|wrong version number|\bssl\b|\btls\b|ERR_SSL|ERR_TLS|EPROTO|alert (bad|unknown|handshake)/i;
const REFUSED_MESSAGE = /ECONNREFUSED|connection refused|ECONNRESET|EHOSTUNREACH|ENETUNREACH|EPIPE|Connection dropped/i;
const TIMEOUT_MESSAGE = /deadline exceeded|ETIMEDOUT|timed out after/i;

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') return error.message;
  return String(error);
}

function grpcCodeOf(error: unknown, rawMessage: string): number | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number') return error.code;
  const prefixed = GRPC_PREFIX.exec(rawMessage);
  if (prefixed?.[1] !== undefined) return Number(prefixed[1]);
  const className = error instanceof Error ? error.constructor.name : undefined;
  return className === undefined ? undefined : ETCD3_CLASS_CODES[className];
}

function classify(error: unknown, message: string, grpcCode: number | undefined): EtcdFailure['kind'] {
  const className = error instanceof Error ? error.constructor.name : '';
  if (grpcCode === GRPC.UNAUTHENTICATED || grpcCode === GRPC.PERMISSION_DENIED) return 'auth';
  if (AUTH_CLASSES.has(className) || AUTH_MESSAGE.test(message)) return 'auth';
  // Past here, an "etcdserver:" message means the member answered: reachable, but it said no.
  if (message.includes('etcdserver:')) return 'other';
  if (TLS_MESSAGE.test(message)) return 'tls';
  if (REFUSED_MESSAGE.test(message)) return 'refused';
  if (grpcCode === GRPC.DEADLINE_EXCEEDED || TIMEOUT_MESSAGE.test(message)) return 'timeout';
  // grpc-js reports connection-level failures as UNAVAILABLE: nobody answered.
  if (grpcCode === GRPC.UNAVAILABLE) return 'refused';
  return 'other';
}

/**
 * grpc-js wraps a failed connect as "No connection established. Last error: CAUSE (TIME).
 * Resolution note: NOTE"; an OpenSSL CAUSE is a colon-separated line with a source path. A person
 * needs the reason ("ssl/tls alert bad certificate, SSL alert number 42"), not the wrapping.
 */
const CONNECT_WRAPPED = /^No connection established\. Last error: ([\s\S]*?)\s*\(\d{4}-\d\d-\d\dT[^)]*\)\.\s*Resolution note:\s*([\s\S]*)$/;
const OPENSSL_LINE = /error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/;
const SSL_ALERT = /SSL alert number \d+/;

export function tidyConnectMessage(message: string): string {
  const wrapped = CONNECT_WRAPPED.exec(message);
  if (!wrapped) return message;
  const cause = wrapped[1]!.trim();
  const ssl = OPENSSL_LINE.exec(cause);
  const alert = SSL_ALERT.exec(cause)?.[0];
  const reason = ssl ? `${ssl[1]}${alert ? `, ${alert}` : ''}` : cause;
  const note = wrapped[2]!.trim();
  return note ? `${reason} (${note})` : reason;
}

export function normalizeEtcdError(error: unknown): EtcdFailure {
  if (error instanceof EtcdCallError) return error.failure;
  const rawMessage = messageOf(error);
  const grpcCode = grpcCodeOf(error, rawMessage);
  const unprefixed = rawMessage.replace(GRPC_PREFIX, '');
  // Classified on the whole text, said tidied: the kind must not depend on what is cut.
  const message = tidyConnectMessage(unprefixed);
  const failure: EtcdFailure = { kind: classify(error, unprefixed, grpcCode), message };
  if (grpcCode !== undefined) failure.grpcCode = grpcCode;
  return failure;
}

/** Wraps anything thrown into the port's error type, keeping the original as the cause. */
export function toEtcdCallError(error: unknown): EtcdCallError {
  return error instanceof EtcdCallError ? error : new EtcdCallError(normalizeEtcdError(error), { cause: error });
}
