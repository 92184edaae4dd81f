// The exec relay tries one etcd pod after another for a member. Pure: when to stop, how to split
// the call's deadline between the pods, and the one failure said for all of them.
import type { EtcdFailure } from '../../../core/common/index.ts';
import type { PodAddress } from '../kube-paths.ts';
import type { StreamFailureCause } from '../streams/pod-streams.ts';

export interface RelayCandidate extends PodAddress {
  /** The target member's own pod: the last one tried. */
  own: boolean;
}

/** One relay pod tried, and how it failed. */
export type RelayAttempt = { relay: RelayCandidate; failure: EtcdFailure } & (
  | {
      /** The exec did not run (the pod's node, kubelet, runtime or image): the relay's failure. */
      side: 'relay';
      why: StreamFailureCause;
    }
  | {
      /** etcdctl ran in the pod and reported: what the target (or the way to it) said. */
      side: 'target';
    }
);

/** The API server and its RBAC answer alike for every pod: another relay would hear the same. */
const SAME_FOR_EVERY_POD: ReadonlySet<StreamFailureCause> = new Set(['forbidden', 'api-unreachable']);

/**
 * Whether the relays left need not be tried. etcdctl that ran in a healthy pod and was refused,
 * timed out or was answered by etcd got the target's own answer; another pod would get the same.
 * TLS may be the pod's own certificate files, and a failure without etcd's words may be the pod's
 * etcdctl: both leave the next pod worth a try, as does every failure of the exec itself.
 */
export function endsTheSearch(attempt: RelayAttempt): boolean {
  if (attempt.side === 'relay') return SAME_FOR_EVERY_POD.has(attempt.why);
  const { kind, grpcCode, message } = attempt.failure;
  if (kind === 'tls') return false;
  if (kind === 'other') return grpcCode !== undefined || message.includes('etcdserver:');
  return true;
}

/**
 * How much a failure tells, most first: a credential problem (it says what to fix), then the
 * target's answer, then a relay whose image lacks etcdctl (a healthy pod that could relay once
 * configured, so the path is not proven dead), then a relay that hung, one that refused, and an
 * unexplained exec failure.
 */
function telling(attempt: RelayAttempt): number {
  const { kind } = attempt.failure;
  if (kind === 'tls' || kind === 'auth') return 6;
  if (attempt.side === 'target') return 5;
  if (attempt.why === 'binary-missing') return 4;
  return kind === 'timeout' ? 3 : kind === 'refused' ? 2 : 1;
}

/** Few words per pod. None of them is a phrase the classification table matches on. */
const RELAY_WORDS: Readonly<Record<StreamFailureCause, string>> = {
  'kubelet-down': 'kubelet not responding',
  'containerd-down': 'containerd down',
  'node-gone': 'its Node is gone',
  'pod-gone': 'pod gone',
  forbidden: 'exec forbidden by RBAC',
  'api-unreachable': 'API server unreachable',
  'not-listening': 'the exec failed',
  timeout: 'no answer in time',
  'binary-missing': 'no etcdctl at that path in its image',
  other: 'the exec failed',
};

const TARGET_WORDS: Readonly<Record<EtcdFailure['kind'], string>> = {
  refused: 'etcdctl ran, the member refused it',
  timeout: 'etcdctl ran, the member did not answer in time',
  tls: 'etcdctl ran, TLS with the member failed',
  auth: 'etcdctl ran, the member rejected the credentials',
  other: 'etcdctl ran and failed',
};

const podName = (pod: PodAddress): string => `${pod.namespace}/${pod.name}`;

function inWords(attempt: RelayAttempt): string {
  const words = attempt.side === 'relay' ? RELAY_WORDS[attempt.why] : TARGET_WORDS[attempt.failure.kind];
  return `${podName(attempt.relay)}${attempt.relay.own ? ' (its own pod)' : ''}: ${words}`;
}

/**
 * Every relay failed: the most telling failure, in full (its kind and code, so it classifies as it
 * would alone), then each pod tried and how, in the order tried, and the pods the deadline left
 * untried. One relay tried and none left: its failure as it is.
 */
export function everyRelayFailed(attempts: readonly RelayAttempt[], untried: readonly PodAddress[] = []): EtcdFailure {
  const [first, ...rest] = attempts;
  if (!first) throw new RangeError('everyRelayFailed needs the relays tried');
  if (rest.length === 0 && untried.length === 0) return first.failure;
  const best = rest.reduce((most, attempt) => (telling(attempt) > telling(most) ? attempt : most), first);
  const left = untried.length === 0 ? '' : `; the deadline ran out before ${untried.map(podName).join(', ')}`;
  return { ...best.failure, message: `${best.failure.message}; relays tried: ${attempts.map(inWords).join('; ')}${left}` };
}

/**
 * The share of what is left of the deadline for the next relay: half, so one that hangs leaves
 * the others as much as it took; the last one gets all of it.
 */
export const relaySliceMs = (leftMs: number, relaysLeft: number): number => Math.max(1, Math.floor(relaysLeft > 1 ? leftMs / 2 : leftMs));
