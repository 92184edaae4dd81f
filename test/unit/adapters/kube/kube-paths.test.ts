// Which pod serves which member, where each member runs, and which endpoint reaches it over the
// kube paths, all from one workload snapshot.
import { describe, expect, it } from 'vitest';
import {
  execRelayEndpoint,
  hostEvidence,
  kubeSeeds,
  parseExecRelayEndpoint,
  parsePortForwardEndpoint,
  podOfMember,
  portForwardEndpoint,
  relayCandidates,
  relayFor,
  resolveKubePath,
} from '../../../../functions/adapters/kube/kube-paths.ts';
import type { MachineRef } from '../../../../functions/adapters/kube/cluster-api/machines.ts';
import type { EtcdPod, WorkloadNode, WorkloadSnapshot } from '../../../../functions/adapters/kube/workload.ts';
import type { MemberInfo } from '../../../../functions/core/common/types.ts';

const NS = 'kube-system';

/** kubeadm's shape: member cp-<n> on node cp-<n> at 10.0.0.1<n>, its pod etcd-cp-<n> annotated with its client URL. */
const member = (n: number, overrides: Partial<MemberInfo> = {}): MemberInfo => ({
  id: `${n}`.repeat(16).slice(0, 16),
  name: `cp-${n}`,
  clientUrls: [`https://10.0.0.1${n}:2379`],
  peerUrls: [`https://10.0.0.1${n}:2380`],
  isLearner: false,
  ...overrides,
});
const pod = (n: number, overrides: Partial<EtcdPod> = {}): EtcdPod => ({
  namespace: NS,
  name: `etcd-cp-${n}`,
  nodeName: `cp-${n}`,
  clientUrl: `https://10.0.0.1${n}:2379`,
  podIp: `10.0.0.1${n}`,
  ...overrides,
});
/** 'unknown': the Node posted no Ready condition. */
const node = (n: number, ready: boolean | 'unknown' = true, name = `cp-${n}`): WorkloadNode => ({
  name,
  internalIps: [`10.0.0.1${n}`],
  ...(ready === 'unknown' ? {} : { ready }),
});
const snapshot = (pods: EtcdPod[], nodes: WorkloadNode[]): WorkloadSnapshot => ({ pods, nodes });
const three = snapshot([pod(1), pod(2), pod(3)], [node(1), node(2), node(3)]);
const machine = (name: string, nodeName: string | undefined, deleting = false): MachineRef => ({
  name,
  namespace: 'default',
  ...(nodeName === undefined ? {} : { nodeName }),
  deleting,
  uid: `uid-${name}`,
  controlPlane: true,
});

describe('endpoints', () => {
  it('formats and parses a port-forward endpoint, the port defaulting to etcd’s client port', () => {
    const address = { namespace: NS, name: 'etcd-cp-2' };
    expect(portForwardEndpoint(address)).toBe('kube-system/etcd-cp-2:2379');
    expect(parsePortForwardEndpoint(portForwardEndpoint(address))).toEqual({ ...address, port: 2379 });
    expect(parsePortForwardEndpoint(portForwardEndpoint({ namespace: 'etcd', name: 'etcd-0.etcd' }, 12379))).toEqual({
      namespace: 'etcd',
      name: 'etcd-0.etcd',
      port: 12379,
    });
  });

  it('formats and parses an exec endpoint: the target’s client URL as seen from the relay pod', () => {
    for (const clientUrl of ['https://10.0.0.12:2379', 'http://127.0.0.1:40123', 'https://[fd00::12]:2379']) {
      const relay = { namespace: NS, name: 'etcd-cp-1' };
      expect(execRelayEndpoint(clientUrl, relay)).toBe(`${clientUrl} via kube-system/etcd-cp-1`);
      expect(parseExecRelayEndpoint(execRelayEndpoint(clientUrl, relay))).toEqual({ clientUrl, relay });
    }
  });

  const refusals: [string, (endpoint: string) => unknown, string[]][] = [
    [
      'port-forward',
      parsePortForwardEndpoint,
      [
        'etcd-cp-2:2379',
        'kube-system/etcd-cp-2',
        'kube-system/etcd-cp-2:port',
        'kube-system/Etcd-CP-2:2379',
        'https://10.0.0.12:2379',
        'kube-system/etcd-cp-2:2379 ',
        'https://10.0.0.12:2379 via kube-system/etcd-cp-1',
      ],
    ],
    [
      'exec-relay',
      parseExecRelayEndpoint,
      [
        'kube-system/etcd-cp-2:2379',
        'https://10.0.0.12:2379',
        '10.0.0.12:2379 via kube-system/etcd-cp-1',
        'https://10.0.0.12:2379 via etcd-cp-1',
        'https://10.0.0.12:2379 via kube-system/ETCD-CP-1',
        'https://10.0.0.12:2379  via kube-system/etcd-cp-1',
        'unix:///run/etcd.sock via kube-system/etcd-cp-1',
      ],
    ],
  ];
  it.each(refusals)('refuses what is no %s endpoint', (_, parse, endpoints) => {
    for (const endpoint of endpoints) expect(() => parse(endpoint), endpoint).toThrow(RangeError);
  });
});

describe('podOfMember', () => {
  it('takes kubeadm’s mirror pod etcd-<name>, the name lowercased', () => {
    const s = snapshot([pod(1), pod(2)], []);
    expect(podOfMember(member(2), s)?.name).toBe('etcd-cp-2');
    expect(podOfMember(member(2, { name: 'CP-2', clientUrls: [], peerUrls: [] }), s)?.name).toBe('etcd-cp-2');
  });

  it('prefers the name over a URL another pod advertises', () => {
    const s = snapshot([pod(1, { clientUrl: 'https://10.0.0.12:2379' }), pod(2, { clientUrl: 'https://10.9.9.9:2379' })], []);
    expect(podOfMember(member(2), s)?.name).toBe('etcd-cp-2');
  });

  it('else the pod whose advertise-client-urls annotation is one of the member’s client URLs', () => {
    const s = snapshot([pod(1, { name: 'etcd-a', podIp: '10.1.1.1' }), pod(2, { name: 'etcd-b', podIp: '10.1.1.2' })], []);
    expect(podOfMember(member(2, { name: 'renamed' }), s)?.name).toBe('etcd-b');
  });

  it('else the one pod whose IP is the host of a peer URL (IPv6 too, case folded)', () => {
    const s = snapshot([pod(1, { name: 'etcd-a' }), pod(2, { name: 'etcd-b', clientUrl: undefined, podIp: 'FD00::12' })], []);
    const v6 = member(2, { name: 'renamed', clientUrls: ['https://[fd00::12]:2379'], peerUrls: ['https://[fd00::12]:2380'] });
    expect(podOfMember(v6, s)?.name).toBe('etcd-b');
  });

  it('an unstarted member (no name, no client URL) is matched by its peer URL only', () => {
    const s = snapshot([pod(1), pod(4)], []);
    expect(podOfMember(member(4, { name: '', clientUrls: [] }), s)?.name).toBe('etcd-cp-4');
  });

  it('two pods on the member’s IP are ambiguous: no pod, rather than the wrong one', () => {
    const shared = { podIp: '127.0.0.1', clientUrl: undefined };
    const s = snapshot([pod(1, { name: 'etcd-a', ...shared }), pod(2, { name: 'etcd-b', ...shared })], []);
    expect(podOfMember(member(2, { name: 'renamed', peerUrls: ['http://127.0.0.1:2380'] }), s)).toBeUndefined();
  });

  it('no pod when nothing matches', () => {
    expect(podOfMember(member(9), three)).toBeUndefined();
    expect(podOfMember(member(9, { peerUrls: ['not a url'] }), three)).toBeUndefined();
  });
});

describe('hostEvidence', () => {
  it('takes the node from the member’s pod and finds it in the Node list', () => {
    expect(hostEvidence(member(2), three)).toEqual({ node: 'cp-2', nodeExists: true, pod: 'kube-system/etcd-cp-2' });
  });

  it('a pod whose Node is missing from the list: the node named, not existing, the pod kept', () => {
    const s = snapshot([pod(1), pod(2)], [node(1)]);
    expect(hostEvidence(member(2), s)).toEqual({ node: 'cp-2', nodeExists: false, pod: 'kube-system/etcd-cp-2' });
  });

  it('without a pod, the Node matched by the member’s name, then by InternalIP', () => {
    const s = snapshot([], [node(1), node(2, true, 'ip-10-0-0-12')]);
    expect(hostEvidence(member(1), s)).toEqual({ node: 'cp-1', nodeExists: true });
    expect(hostEvidence(member(2), s)).toEqual({ node: 'ip-10-0-0-12', nodeExists: true });
  });

  it('neither pod nor Node: no node, not existing', () => {
    expect(hostEvidence(member(7), three)).toEqual({ nodeExists: false });
  });

  it('adds the Machine whose nodeRef is the node, with whether it is being deleted', () => {
    const machines = [machine('wl-cp-abc', 'cp-1'), machine('wl-cp-def', 'cp-2', true), machine('wl-cp-new', undefined)];
    expect(hostEvidence(member(1), three, machines).machine).toEqual({ name: 'wl-cp-abc', deleting: false });
    expect(hostEvidence(member(2), three, machines)).toEqual({
      node: 'cp-2',
      nodeExists: true,
      pod: 'kube-system/etcd-cp-2',
      machine: { name: 'wl-cp-def', deleting: true },
    });
    expect(hostEvidence(member(3), three, machines).machine).toBeUndefined();
    // Its UpToDate condition False: a rollout replaces it next.
    expect(hostEvidence(member(1), three, [{ ...machine('wl-cp-abc', 'cp-1'), upToDate: false }]).machine).toEqual({
      name: 'wl-cp-abc',
      deleting: false,
      outdated: true,
    });
    expect(hostEvidence(member(1), three, [{ ...machine('wl-cp-abc', 'cp-1'), upToDate: true }]).machine).toEqual({ name: 'wl-cp-abc', deleting: false });
    // A Machine that has not joined has no nodeRef: it never matches a member without a node.
    expect(hostEvidence(member(7), three, machines)).toEqual({ nodeExists: false });
  });

  it('a Machine is found for a gone Node too: its nodeRef outlives the Node', () => {
    const s = snapshot([pod(1), pod(2)], [node(1)]);
    expect(hostEvidence(member(2), s, [machine('wl-cp-def', 'cp-2', true)])).toMatchObject({
      nodeExists: false,
      machine: { name: 'wl-cp-def', deleting: true },
    });
  });
});

describe('relayFor', () => {
  it('never the target’s own pod while another exists', () => {
    expect(relayFor(member(1), three)?.name).toBe('etcd-cp-2');
    expect(relayFor(member(2), three)?.name).toBe('etcd-cp-1');
  });

  it('nor a pod on the target’s node', () => {
    const s = snapshot([pod(1), pod(2, { name: 'etcd-also-on-cp-1', nodeName: 'cp-1' }), pod(3)], [node(1), node(2), node(3)]);
    expect(relayFor(member(1), s)?.name).toBe('etcd-cp-3');
  });

  it('Ready nodes first, nodes that posted no Ready condition next, NotReady last; by name within each', () => {
    const s = snapshot([pod(1), pod(2), pod(3), pod(4), pod(5)], [node(1), node(2, false), node(3, 'unknown'), node(4, 'unknown'), node(5, true)]);
    expect(relayFor(member(1), s)?.name).toBe('etcd-cp-5');
    expect(relayFor(member(5), s)?.name).toBe('etcd-cp-1');
    const noneReady = snapshot(s.pods, [node(1), node(2, false), node(3, 'unknown'), node(4, 'unknown')]);
    expect(relayFor(member(1), noneReady)?.name).toBe('etcd-cp-3');
    expect(relayFor(member(1), snapshot(s.pods, [node(1), node(2, false)]))?.name).toBe('etcd-cp-2');
  });

  it('skips pods whose Node is gone: nothing can exec there', () => {
    const s = snapshot([pod(1), pod(2), pod(3)], [node(1), node(3, false)]);
    expect(relayFor(member(1), s)?.name).toBe('etcd-cp-3');
  });

  it('falls back to the target’s own pod when no other is left, if its Node exists', () => {
    expect(relayFor(member(1), snapshot([pod(1), pod(2)], [node(1)]))?.name).toBe('etcd-cp-1');
    expect(relayFor(member(1), snapshot([pod(1)], [node(1, false)]))?.name).toBe('etcd-cp-1');
    expect(relayFor(member(1), snapshot([pod(1), pod(2)], []))).toBeUndefined();
  });

  it('a member without a pod may use any pod on an existing Node', () => {
    expect(relayFor(member(9), three)?.name).toBe('etcd-cp-1');
    expect(relayFor(member(9), snapshot([], [node(1)]))).toBeUndefined();
  });
});

describe('relayCandidates', () => {
  const names = (pods: EtcdPod[]) => pods.map((p) => p.name);

  it('every other pod, Ready first, then unknown, then NotReady, by name within each; the target’s own pod last', () => {
    const s = snapshot([pod(1), pod(2), pod(3), pod(4), pod(5)], [node(1), node(2, false), node(3, 'unknown'), node(4, true), node(5, 'unknown')]);
    expect(names(relayCandidates(member(3), s))).toEqual(['etcd-cp-1', 'etcd-cp-4', 'etcd-cp-5', 'etcd-cp-2', 'etcd-cp-3']);
    // No Node says Ready (the kubelets post no conditions): by name, the own pod still last.
    expect(names(relayCandidates(member(2), three))).toEqual(['etcd-cp-1', 'etcd-cp-3', 'etcd-cp-2']);
  });

  it('the pod that answered last goes first, the rest keep their order; an unknown name changes nothing', () => {
    expect(names(relayCandidates(member(2), three, 'etcd-cp-3'))).toEqual(['etcd-cp-3', 'etcd-cp-1', 'etcd-cp-2']);
    expect(names(relayCandidates(member(2), three, 'etcd-cp-2'))).toEqual(['etcd-cp-2', 'etcd-cp-1', 'etcd-cp-3']);
    expect(names(relayCandidates(member(2), three, 'etcd-cp-9'))).toEqual(['etcd-cp-1', 'etcd-cp-3', 'etcd-cp-2']);
  });

  it('never a pod whose Node is gone, nor another pod on the target’s node before its own', () => {
    const s = snapshot([pod(1), pod(2, { name: 'etcd-also-on-cp-1', nodeName: 'cp-1' }), pod(3), pod(4)], [node(1), node(3), node(4, false)]);
    expect(names(relayCandidates(member(1), s))).toEqual(['etcd-cp-3', 'etcd-cp-4', 'etcd-cp-1']);
    // The remembered relay is gone from the snapshot: it is not tried.
    expect(names(relayCandidates(member(4), snapshot([pod(1), pod(4)], [node(1), node(4)]), 'etcd-cp-3'))).toEqual(['etcd-cp-1', 'etcd-cp-4']);
    expect(relayCandidates(member(1), snapshot([pod(1), pod(2)], []))).toEqual([]);
  });
});

describe('resolveKubePath', () => {
  it('port-forward: the member’s own pod', () => {
    expect(resolveKubePath(member(2), 'port-forward', three)).toBe('kube-system/etcd-cp-2:2379');
    expect(resolveKubePath(member(9), 'port-forward', three)).toBeUndefined();
  });

  it('exec-relay: the member’s first client URL via a relay pod elsewhere', () => {
    const m = member(2, { clientUrls: ['https://10.0.0.12:2379', 'https://cp-2.example:2379'] });
    expect(resolveKubePath(m, 'exec-relay', three)).toBe('https://10.0.0.12:2379 via kube-system/etcd-cp-1');
    expect(parseExecRelayEndpoint(resolveKubePath(m, 'exec-relay', three)!)).toEqual({
      clientUrl: 'https://10.0.0.12:2379',
      relay: { namespace: NS, name: 'etcd-cp-1' },
    });
  });

  it('exec-relay: via the pod that answered last, when it is still a candidate', () => {
    expect(resolveKubePath(member(2), 'exec-relay', three, 'etcd-cp-3')).toBe('https://10.0.0.12:2379 via kube-system/etcd-cp-3');
    expect(resolveKubePath(member(2), 'exec-relay', snapshot([pod(1), pod(2)], [node(1), node(2)]), 'etcd-cp-3')).toBe(
      'https://10.0.0.12:2379 via kube-system/etcd-cp-1',
    );
  });

  it('exec-relay: none for a member with no client URL, or no relay', () => {
    expect(resolveKubePath(member(2, { name: '', clientUrls: [] }), 'exec-relay', three)).toBeUndefined();
    expect(resolveKubePath(member(2), 'exec-relay', snapshot([pod(1), pod(2)], []))).toBeUndefined();
  });

  it('the direct path is not a kube path', () => {
    expect(resolveKubePath(member(2), 'direct', three)).toBeUndefined();
  });
});

describe('kubeSeeds', () => {
  it('every pod over port-forward; over exec-relay only the pods with a client URL, each aimed at itself', () => {
    const s = snapshot([pod(1), pod(2, { clientUrl: undefined }), pod(3)], [node(1), node(2), node(3)]);
    expect(kubeSeeds(s, ['port-forward', 'exec-relay'])).toEqual([
      { endpoint: 'kube-system/etcd-cp-1:2379', path: 'port-forward' },
      { endpoint: 'kube-system/etcd-cp-2:2379', path: 'port-forward' },
      { endpoint: 'kube-system/etcd-cp-3:2379', path: 'port-forward' },
      { endpoint: 'https://10.0.0.11:2379 via kube-system/etcd-cp-1', path: 'exec-relay' },
      { endpoint: 'https://10.0.0.13:2379 via kube-system/etcd-cp-3', path: 'exec-relay' },
    ]);
  });

  it('none for the direct path, none without pods', () => {
    expect(kubeSeeds(three, ['direct'])).toEqual([]);
    expect(kubeSeeds(snapshot([], [node(1)]), ['port-forward', 'exec-relay'])).toEqual([]);
  });
});
