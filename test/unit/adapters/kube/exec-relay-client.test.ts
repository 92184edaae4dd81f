// The relay client's walk over the etcd pods, on a stub of the pod streams: which pod each call
// goes through, with how much of the deadline, and what is said of the answer or the failure.
import { describe, expect, it } from 'vitest';
import { createExecRelayClient } from '../../../../functions/adapters/kube/exec-relay/exec-relay-client.ts';
import type { RelayCandidate } from '../../../../functions/adapters/kube/exec-relay/exec-relay-attempts.ts';
import type { RelayRoutes } from '../../../../functions/adapters/kube/exec-relay/exec-relay-routes.ts';
import { PodStreamError, type ExecResult, type PodRef, type PodStreams } from '../../../../functions/adapters/kube/streams/pod-streams.ts';
import { EtcdCallError, type EtcdMemberClient } from '../../../../functions/ports/etcd.ts';

const URL_2 = 'https://10.0.0.12:2379';
const pod = (n: number, own = false): RelayCandidate => ({ namespace: 'kube-system', name: `etcd-cp-${n}`, own });
const STATUS =
  '[{"Endpoint":"https://10.0.0.12:2379","Status":{"header":{"cluster_id":1,"member_id":2,"revision":1,"raft_term":2},"version":"3.4.23","dbSize":20480,"leader":2,"raftIndex":8,"raftTerm":2,"raftAppliedIndex":8}}]';

type Behaviour = 'answers' | 'kubelet-down' | 'hangs' | 'refused-by-target';
interface Asked {
  pod: string;
  argv: string[];
  deadlineMs: number;
}

/** Each pod behaves as told; a pod that hangs fails at its deadline, as the real exec does. */
function stubStreams(behaviour: Record<string, Behaviour>): { streams: PodStreams; asked: Asked[] } {
  const asked: Asked[] = [];
  const streams: PodStreams = {
    exec(ref: PodRef, argv: string[], deadlineMs: number): Promise<ExecResult> {
      asked.push({ pod: ref.name, argv, deadlineMs });
      switch (behaviour[ref.name]) {
        case 'answers':
          return Promise.resolve({ stdout: STATUS, stderr: '', exitCode: 0 });
        case 'refused-by-target':
          return Promise.resolve({ stdout: '', stderr: 'Error: context deadline exceeded: dial tcp 10.0.0.12:2379: connect: connection refused', exitCode: 1 });
        case 'hangs':
          return new Promise((_, reject) =>
            setTimeout(
              () => reject(new PodStreamError(`exec in kube-system/${ref.name} failed: no exit status within ${deadlineMs} ms`, 'timeout', 'timeout')),
              deadlineMs,
            ),
          );
        default:
          return Promise.reject(
            new PodStreamError(
              `exec in kube-system/${ref.name} failed: error sending request: connect: connection refused (the kubelet on the pod's node is not responding)`,
              'kubelet-down',
              'refused',
            ),
          );
      }
    },
    forward: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
  };
  return { streams, asked };
}

/** A routes object that records what it is told. */
function recordingRoutes(candidates: RelayCandidate[]): { routes: RelayRoutes; told: string[] } {
  const told: string[] = [];
  return { routes: { candidates: () => candidates, answered: (_url, relay) => told.push(relay.name) }, told };
}

async function failureOf(call: Promise<unknown>): Promise<EtcdCallError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof EtcdCallError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

const client = (streams: PodStreams, named: number, routes?: RelayRoutes): EtcdMemberClient =>
  createExecRelayClient({ endpoint: `${URL_2} via kube-system/etcd-cp-${named}`, path: 'exec-relay' }, streams, routes ? { routes } : {});

describe('the exec relay client', () => {
  it('a read goes on to the next pod past a kubelet that is down, and says the answer came through it', async () => {
    const { streams, asked } = stubStreams({ 'etcd-cp-1': 'kubelet-down', 'etcd-cp-3': 'answers' });
    const { routes, told } = recordingRoutes([pod(1), pod(3), pod(2, true)]);
    const relay = client(streams, 1, routes);
    const status = await relay.status(1_000);
    expect(status.leaderId).toBe('2');
    expect(asked.map((a) => a.pod)).toEqual(['etcd-cp-1', 'etcd-cp-3']);
    expect(relay.answeredThrough?.(status)).toBe(`${URL_2} via kube-system/etcd-cp-3`);
    expect(told).toEqual(['etcd-cp-3']);
  });

  it('runs kubeadm’s etcdctl by its path', async () => {
    const { streams, asked } = stubStreams({ 'etcd-cp-1': 'answers' });
    await client(streams, 1).status(1_000);
    expect(asked[0]?.argv[0]).toBe('/usr/local/bin/etcdctl');
  });

  it('a pod that hangs takes half of the deadline, and the next one still answers within it', async () => {
    const { streams, asked } = stubStreams({ 'etcd-cp-1': 'hangs', 'etcd-cp-3': 'answers' });
    const status = await client(streams, 1, recordingRoutes([pod(1), pod(3), pod(2, true)]).routes).status(1_000);
    expect(status.leaderId).toBe('2');
    expect(asked.map((a) => a.pod)).toEqual(['etcd-cp-1', 'etcd-cp-3']);
    const [hung, next] = asked.map((a) => a.deadlineMs) as [number, number];
    expect(hung).toBeGreaterThan(490);
    expect(hung).toBeLessThanOrEqual(500);
    // Half of what the hung pod left, the member's own pod still to come.
    expect(next).toBeGreaterThan(0);
    expect(next).toBeLessThanOrEqual(250);
  });

  it('stops at the target’s own refusal through a healthy pod: the pods after it are not asked', async () => {
    const { streams, asked } = stubStreams({ 'etcd-cp-1': 'kubelet-down', 'etcd-cp-3': 'refused-by-target', 'etcd-cp-2': 'answers' });
    const error = await failureOf(client(streams, 1, recordingRoutes([pod(1), pod(3), pod(2, true)]).routes).status(1_000));
    expect(asked.map((a) => a.pod)).toEqual(['etcd-cp-1', 'etcd-cp-3']);
    expect(error.failure.kind).toBe('refused');
    expect(error.failure.message).toContain(
      'relays tried: kube-system/etcd-cp-1: kubelet not responding; kube-system/etcd-cp-3: etcdctl ran, the member refused it',
    );
  });

  it('every pod failing: each named, in order, the endpoint’s own pod first', async () => {
    const { streams, asked } = stubStreams({});
    const error = await failureOf(client(streams, 3, recordingRoutes([pod(1), pod(3), pod(2, true)]).routes).memberList(1_000));
    expect(asked.map((a) => a.pod)).toEqual(['etcd-cp-3', 'etcd-cp-1', 'etcd-cp-2']);
    expect(error.failure.message).toMatch(
      /relays tried: kube-system\/etcd-cp-3: kubelet not responding; kube-system\/etcd-cp-1: kubelet not responding; kube-system\/etcd-cp-2 \(its own pod\): kubelet not responding$/,
    );
  });

  it('an action goes through the endpoint’s pod only: what is said of it names where it went', async () => {
    const { streams, asked } = stubStreams({ 'etcd-cp-1': 'kubelet-down', 'etcd-cp-3': 'answers' });
    const error = await failureOf(client(streams, 1, recordingRoutes([pod(1), pod(3)]).routes).moveLeader('3', 1_000));
    expect(asked.map((a) => a.pod)).toEqual(['etcd-cp-1']);
    expect(error.failure).toMatchObject({ kind: 'refused' });
    expect(error.failure.message).not.toContain('relays tried');
  });

  it('defragments through the endpoint’s pod only, etcdctl aimed at the member’s URL with three quarters of the deadline; it neither compacts nor disarms', async () => {
    const { streams, asked } = stubStreams({ 'etcd-cp-1': 'answers', 'etcd-cp-3': 'answers' });
    const relay = client(streams, 1, recordingRoutes([pod(1), pod(3)]).routes);
    await relay.defragment!(600_000);
    expect(asked).toEqual([
      { pod: 'etcd-cp-1', argv: expect.arrayContaining([`--endpoints=${URL_2}`, '--command-timeout=450000ms', 'defrag']), deadlineMs: 600_000 },
    ]);
    expect(asked[0]!.argv.at(-1)).toBe('defrag');
    // etcdctl's `alarm disarm` would disarm a CORRUPT alarm too: the relay offers neither it nor a compaction.
    expect('disarmNoSpace' in relay).toBe(false);
    expect('compact' in relay).toBe(false);
  });

  it('without routes, the endpoint’s pod alone', async () => {
    const { streams, asked } = stubStreams({});
    const error = await failureOf(client(streams, 1).status(1_000));
    expect(asked.map((a) => a.pod)).toEqual(['etcd-cp-1']);
    expect(error.failure.message).not.toContain('relays tried');
  });
});
