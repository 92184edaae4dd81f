// THE classification table: what an etcd failure means and what happens next, as data.
// etcd sends many of these as gRPC Unknown or Unavailable, so its message is the strongest
// signal: classifyFailure tries every row's messages first, then the transport's kind, then
// gRPC codes ("etcdserver: request timed out" is etcd talking, not a socket timeout).
import type { ReasonCode } from './decision.ts';
import type { EtcdFailure } from './types.ts';

export type FailureClass = 'retry-now' | 'back-off' | 'next-candidate' | 'next-path' | 'decide' | 'block';
/** transient: retry; permanent: decide now; fatal: stop and say why. */
export type FailureCategory = 'transient' | 'permanent' | 'fatal';

export interface FailureMatch {
  /** Case-insensitive substrings of etcd's message. */
  messages?: string[];
  grpcCodes?: number[];
  kinds?: EtcdFailure['kind'][];
}

export interface ClassificationRow {
  reason: ReasonCode;
  class: FailureClass;
  category: FailureCategory;
  match: FailureMatch;
  /** What happens next, in plain words. */
  next: string;
}

/** gRPC status codes by name, as grpc-js numbers them: the rows match on some, the etcd adapter reads them all. */
export const grpcCode = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/**
 * What etcd says when it refuses our credentials, after "etcdserver: ": the table's AUTH_FAILED
 * row, and the etcd adapter's reading of an error as an auth failure, match these one list.
 */
export const AUTH_FAILURE_MESSAGES = [
  'permission denied',
  'invalid auth token',
  'authentication failed',
  'user name is empty',
  'user name not found',
  'auth: revision in header is old',
] as const;

export const classificationTable: readonly ClassificationRow[] = [
  {
    reason: 'LEADER_CHANGED',
    class: 'retry-now',
    category: 'transient',
    match: { messages: ['etcdserver: not leader'] },
    next: 're-probe now to find the current leader (a bounded number of times, then back off)',
  },
  {
    reason: 'TRANSFEREE_UNFIT',
    class: 'next-candidate',
    category: 'permanent',
    match: { messages: ['bad leader transferee'] },
    next: 'try the next candidate',
  },
  {
    reason: 'LEADER_TRANSFER_TIMEOUT',
    class: 'next-candidate',
    category: 'transient',
    match: { messages: ['leader transfer took too long'] },
    next: 'try the next candidate, then back off',
  },
  {
    reason: 'NOT_ENOUGH_STARTED_MEMBERS',
    class: 'block',
    category: 'fatal',
    // Also "etcdserver: re-configuration failed due to not enough started members".
    match: { messages: ['not enough started members'] },
    next: 'blocked, because etcd refuses the change until more members are started',
  },
  {
    reason: 'ETCD_NO_SPACE',
    class: 'block',
    category: 'fatal',
    // etcd's ErrNoSpace: with a NOSPACE alarm active, every member refuses puts, txns and lease grants.
    match: { messages: ['database space exceeded'] },
    next: 'blocked, because etcd refuses every write until space is freed and the NOSPACE alarm is disarmed',
  },
  {
    reason: 'MEMBER_NOT_FOUND',
    class: 'decide',
    category: 'permanent',
    match: { messages: ['member not found'] },
    next: 'the membership changed: decide again from a fresh probe',
  },
  {
    reason: 'ETCD_TRANSIENT',
    class: 'back-off',
    category: 'transient',
    match: {
      messages: [
        'no leader',
        'leader changed',
        'unhealthy cluster',
        // Also "... possibly due to previous leader failure" and "... possibly due to connection lost".
        'request timed out',
        'server stopped',
        'not capable',
        'too many requests',
      ],
    },
    next: 'back off and try again',
  },
  {
    reason: 'AUTH_FAILED',
    class: 'next-path',
    category: 'fatal',
    match: {
      messages: [...AUTH_FAILURE_MESSAGES],
      grpcCodes: [grpcCode.UNAUTHENTICATED, grpcCode.PERMISSION_DENIED],
      kinds: ['auth'],
    },
    next: 'try the next path; if every path rejects us, stop and name the credential',
  },
  {
    reason: 'TLS_FAILED',
    class: 'next-path',
    category: 'fatal',
    match: { kinds: ['tls'] },
    next: 'try the next path; if every path fails TLS, stop and name the certificate',
  },
  {
    reason: 'RELAY_BINARY_MISSING',
    class: 'next-path',
    category: 'fatal',
    // The exec diagnosis says so when the runtime cannot start the relay's etcdctl in a pod.
    match: { messages: ["is not in the container's image"] },
    next: 'try the next path; the exec relay cannot run until --relay-binary (relayBinary) names the etcdctl the etcd image has',
  },
  {
    reason: 'PATH_TIMEOUT',
    class: 'next-path',
    category: 'transient',
    match: { messages: ['deadline exceeded'], grpcCodes: [grpcCode.DEADLINE_EXCEEDED], kinds: ['timeout'] },
    next: 'try the next path; if every path fails, re-probe and let the evidence rule decide',
  },
  {
    reason: 'PATH_REFUSED',
    class: 'next-path',
    category: 'transient',
    match: { messages: ['connection refused', 'econnrefused'], grpcCodes: [grpcCode.UNAVAILABLE], kinds: ['refused'] },
    next: 'try the next path; if every path fails, re-probe and let the evidence rule decide',
  },
  {
    reason: 'UNKNOWN_ERROR',
    class: 'back-off',
    category: 'transient',
    match: {},
    next: 'back off and try again',
  },
];
