// The exec relay through one etcd pod after another: when to stop, the one failure said for all
// of them (its kind the most telling, its class the one that failure has alone), and the deadline
// shared between the pods. Also which pods a member's calls go through, the one that relayed last first.
import { describe, expect, it } from 'vitest';
import {
  endsTheSearch,
  everyRelayFailed,
  relaySliceMs,
  type RelayAttempt,
  type RelayCandidate,
} from '../../../../functions/adapters/kube/exec-relay/exec-relay-attempts.ts';
import { createRelayRoutes } from '../../../../functions/adapters/kube/exec-relay/exec-relay-routes.ts';
import type { StreamFailureCause } from '../../../../functions/adapters/kube/streams/pod-streams.ts';
import type { WorkloadSnapshot } from '../../../../functions/adapters/kube/workload.ts';
import { classifyFailure } from '../../../../functions/core/common/classify.ts';
import type { EtcdFailure, MemberInfo } from '../../../../functions/core/common/types.ts';

const relay = (n: number, own = false): RelayCandidate => ({ namespace: 'kube-system', name: `etcd-cp-${n}`, own });

const viaRelay = (n: number, why: StreamFailureCause, kind: EtcdFailure['kind'], message: string, own = false): RelayAttempt => ({
  relay: relay(n, own),
  side: 'relay',
  why,
  failure: { kind, message: `exec in kube-system/etcd-cp-${n} failed: ${message}` },
});
const fromTarget = (n: number, failure: EtcdFailure): RelayAttempt => ({ relay: relay(n), side: 'target', failure });

const kubeletDown = (n: number, own = false) =>
  viaRelay(
    n,
    'kubelet-down',
    'refused',
    `error sending request: dial tcp 10.0.0.1${n}:10250: connect: connection refused (the kubelet on the pod's node is not responding)`,
    own,
  );
const containerdDown = (n: number) =>
  viaRelay(n, 'containerd-down', 'refused', "unable to upgrade connection: rpc error: code = Unavailable (containerd on the pod's node is down)");
const hung = (n: number) => viaRelay(n, 'timeout', 'timeout', 'no exit status within 500 ms (the deadline ran out; the stream was closed)');
const noBinary = (n: number) =>
  viaRelay(
    n,
    'binary-missing',
    'other',
    'OCI runtime exec failed: exec failed: unable to start container process: exec: "/usr/local/bin/etcdctl": stat /usr/local/bin/etcdctl: no such file or directory: unknown (/usr/local/bin/etcdctl is not in the container\'s image)',
  );
const forbidden = (n: number) =>
  viaRelay(n, 'forbidden', 'auth', 'pods "etcd-cp-1" is forbidden (RBAC: the identity needs both get and create on pods/exec and pods/portforward)');
const tls = (n: number) => fromTarget(n, { kind: 'tls', message: 'tls: failed to verify certificate: x509: certificate signed by unknown authority' });
const refusedByTarget = (n: number) =>
  fromTarget(n, {
    kind: 'refused',
    grpcCode: 14,
    message: 'connection error: desc = "transport: Error while dialing dial tcp 10.0.0.12:2379: connect: connection refused"',
  });
const notLeader = (n: number) => fromTarget(n, { kind: 'other', grpcCode: 9, message: 'etcdserver: not leader' });
const unreadable = (n: number) => fromTarget(n, { kind: 'other', message: 'unreadable etcdctl endpoint status output: expected one endpoint, got []' });

describe('endsTheSearch', () => {
  it('goes on past any failure of the exec itself: another pod’s node, kubelet, runtime or image may serve', () => {
    for (const attempt of [
      kubeletDown(1),
      containerdDown(1),
      hung(1),
      noBinary(1),
      viaRelay(1, 'pod-gone', 'refused', 'pods "etcd-cp-1" not found (the pod is gone)'),
    ]) {
      expect(endsTheSearch(attempt), attempt.failure.message).toBe(false);
    }
  });

  it('stops where every pod would hear the same: RBAC, or the API server itself', () => {
    expect(endsTheSearch(forbidden(1))).toBe(true);
    expect(endsTheSearch(viaRelay(1, 'api-unreachable', 'refused', 'connect ECONNREFUSED 10.0.0.1:6443 (the API server did not answer)'))).toBe(true);
  });

  it('stops at the target’s own answer through a healthy pod: refused, timed out, rejected, or etcd’s words', () => {
    expect(endsTheSearch(refusedByTarget(3))).toBe(true);
    expect(endsTheSearch(fromTarget(3, { kind: 'timeout', grpcCode: 4, message: 'context deadline exceeded' }))).toBe(true);
    expect(endsTheSearch(fromTarget(3, { kind: 'auth', grpcCode: 7, message: 'etcdserver: permission denied' }))).toBe(true);
    expect(endsTheSearch(notLeader(3))).toBe(true);
  });

  it('goes on past TLS (the pod’s own certificate files may be the cause) and an etcdctl failure without etcd’s words', () => {
    expect(endsTheSearch(tls(3))).toBe(false);
    expect(endsTheSearch(fromTarget(3, { kind: 'tls', message: 'open /etc/kubernetes/pki/etcd/healthcheck-client.crt: no such file or directory' }))).toBe(
      false,
    );
    expect(endsTheSearch(unreadable(3))).toBe(false);
  });
});

describe('everyRelayFailed', () => {
  it('one pod tried and none left: its failure as it is', () => {
    expect(everyRelayFailed([kubeletDown(1)])).toEqual(kubeletDown(1).failure);
  });

  it('names every pod tried, in order, with how each failed in a few words, the member’s own pod marked', () => {
    const failure = everyRelayFailed([kubeletDown(3), containerdDown(1), kubeletDown(2, true)]);
    expect(failure.kind).toBe('refused');
    expect(failure.message).toBe(
      `${kubeletDown(3).failure.message}; relays tried: kube-system/etcd-cp-3: kubelet not responding; kube-system/etcd-cp-1: containerd down; kube-system/etcd-cp-2 (its own pod): kubelet not responding`,
    );
  });

  it('says which pods the deadline left untried', () => {
    expect(everyRelayFailed([hung(1)], [relay(3), relay(2, true)]).message).toBe(
      `${hung(1).failure.message}; relays tried: kube-system/etcd-cp-1: no answer in time; the deadline ran out before kube-system/etcd-cp-3, kube-system/etcd-cp-2`,
    );
  });

  const cases: [string, RelayAttempt[], RelayAttempt][] = [
    ['the target’s TLS beats kubelets that are down', [kubeletDown(1), tls(3), kubeletDown(2, true)], tls(3)],
    ['RBAC beats a kubelet that is down', [kubeletDown(1), forbidden(3)], forbidden(3)],
    ['the target refusing beats the relays before it', [kubeletDown(1), hung(2), refusedByTarget(3)], refusedByTarget(3)],
    ['etcd’s words beat a pod without etcdctl', [noBinary(1), notLeader(3)], notLeader(3)],
    ['a pod without etcdctl (the path is not proven dead) beats kubelets that are down', [kubeletDown(1), noBinary(3), kubeletDown(2, true)], noBinary(3)],
    ['a relay that hung beats one that refused', [kubeletDown(1), hung(3)], hung(3)],
    [
      'a refusal beats an unexplained exec failure',
      [viaRelay(1, 'other', 'other', 'the stream closed (code 1006) before a Status arrived (the stream ended without an exit status)'), containerdDown(3)],
      containerdDown(3),
    ],
    ['the first of equals leads', [containerdDown(3), kubeletDown(1)], containerdDown(3)],
  ];
  it.each(cases)('%s: its kind and code, and it classifies as it would alone', (_, attempts, best) => {
    const failure = everyRelayFailed(attempts);
    expect({ kind: failure.kind, grpcCode: failure.grpcCode }).toEqual({ kind: best.failure.kind, grpcCode: best.failure.grpcCode });
    expect(failure.message.startsWith(`${best.failure.message}; relays tried: `)).toBe(true);
    expect(classifyFailure(failure).reason).toBe(classifyFailure(best.failure).reason);
  });

  it('a pod without etcdctl classifies as RELAY_BINARY_MISSING, and only when it leads', () => {
    expect(classifyFailure(everyRelayFailed([kubeletDown(1), noBinary(3)])).reason).toBe('RELAY_BINARY_MISSING');
    expect(classifyFailure(everyRelayFailed([noBinary(1), tls(3)])).reason).toBe('TLS_FAILED');
    expect(classifyFailure(everyRelayFailed([noBinary(1), kubeletDown(3)])).reason).toBe('RELAY_BINARY_MISSING');
  });

  it('needs at least one pod tried', () => {
    expect(() => everyRelayFailed([])).toThrow(RangeError);
  });
});

describe('relaySliceMs', () => {
  it('half of what is left while another pod waits, all of it for the last', () => {
    expect(relaySliceMs(1_000, 3)).toBe(500);
    expect(relaySliceMs(999, 2)).toBe(499);
    expect(relaySliceMs(1_000, 1)).toBe(1_000);
  });

  it('never less than 1 ms, so the first pod is always asked', () => {
    expect(relaySliceMs(0, 3)).toBe(1);
    expect(relaySliceMs(-5, 1)).toBe(1);
  });
});

describe('createRelayRoutes', () => {
  const member = (n: number): MemberInfo => ({
    id: `${n}`.repeat(16),
    name: `cp-${n}`,
    clientUrls: [`https://10.0.0.1${n}:2379`],
    peerUrls: [`https://10.0.0.1${n}:2380`],
    isLearner: false,
  });
  const snapshot: WorkloadSnapshot = {
    pods: [1, 2, 3].map((n) => ({ namespace: 'kube-system', name: `etcd-cp-${n}`, nodeName: `cp-${n}`, clientUrl: `https://10.0.0.1${n}:2379` })),
    nodes: [1, 2, 3].map((n) => ({ name: `cp-${n}`, internalIps: [`10.0.0.1${n}`] })),
  };
  const url = 'https://10.0.0.12:2379';

  it('a look names the first relay in the endpoint and keeps every candidate, the member’s own pod last and marked', () => {
    const routes = createRelayRoutes();
    expect(routes.candidates(url)).toEqual([]);
    expect(routes.endpointFor(member(2), snapshot)).toBe(`${url} via kube-system/etcd-cp-1`);
    expect(routes.candidates(url)).toEqual([relay(1), relay(3), relay(2, true)]);
  });

  it('the pod that relayed last goes first at the next look', () => {
    const routes = createRelayRoutes();
    routes.endpointFor(member(2), snapshot);
    routes.answered(url, relay(3));
    expect(routes.endpointFor(member(2), snapshot)).toBe(`${url} via kube-system/etcd-cp-3`);
    expect(routes.candidates(url)).toEqual([relay(3), relay(1), relay(2, true)]);
    // Per member: another member's order is its own.
    expect(routes.endpointFor(member(1), snapshot)).toBe('https://10.0.0.11:2379 via kube-system/etcd-cp-2');
  });

  it('no endpoint for a member without a client URL, or without a pod to run in', () => {
    const routes = createRelayRoutes();
    expect(routes.endpointFor({ ...member(2), clientUrls: [] }, snapshot)).toBeUndefined();
    expect(routes.endpointFor(member(2), { pods: snapshot.pods, nodes: [] })).toBeUndefined();
  });
});
