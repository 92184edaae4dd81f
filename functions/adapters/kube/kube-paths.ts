// Which endpoint reaches a member over the kube paths, decided from one workload snapshot. Pure.
// An endpoint is a plain string the messages show as is:
//   port-forward: `kube-system/etcd-cp-2:2379`, the pod whose port the API server forwards;
//   exec-relay: `https://10.0.0.12:2379 via kube-system/etcd-cp-1`, the target's client URL as seen
//   from the relay pod the etcdctl runs in. A probe's answer names the pod that relayed it (the
//   client tries each candidate, exec-relay-client.ts); a failure names the first pod tried, and
//   its message every pod tried.
import type { HostEvidence, MemberInfo, PathName } from '../../core/common/index.ts';
import type { EndpointTarget } from '../../ports/etcd.ts';
import type { MachineRef } from './cluster-api/machines.ts';
import { hostOf as urlHost, nodeOfMember } from './node-match.ts';
import type { EtcdPod, WorkloadNode, WorkloadSnapshot } from './workload.ts';

export const ETCD_CLIENT_PORT = 2379;

export interface PodAddress {
  namespace: string;
  name: string;
}

export const portForwardEndpoint = (pod: PodAddress, port = ETCD_CLIENT_PORT): string => `${pod.namespace}/${pod.name}:${port}`;

export function parsePortForwardEndpoint(endpoint: string): PodAddress & { port: number } {
  const matched = /^([a-z0-9-]+)\/([a-z0-9.-]+):(\d+)$/.exec(endpoint);
  if (!matched) throw new RangeError(`not a port-forward endpoint (namespace/pod:port): ${endpoint}`);
  return { namespace: matched[1]!, name: matched[2]!, port: Number(matched[3]) };
}

export const execRelayEndpoint = (clientUrl: string, relay: PodAddress): string => `${clientUrl} via ${relay.namespace}/${relay.name}`;

export function parseExecRelayEndpoint(endpoint: string): { clientUrl: string; relay: PodAddress } {
  const matched = /^(https?:\/\/\S+) via ([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(endpoint);
  if (!matched) throw new RangeError(`not an exec-relay endpoint (URL via namespace/pod): ${endpoint}`);
  return { clientUrl: matched[1]!, relay: { namespace: matched[2]!, name: matched[3]! } };
}

/** kubeadm's mirror pod is `etcd-<node>` and the member is named after the node; else by URL, else by node IP. */
export function podOfMember(member: Pick<MemberInfo, 'name' | 'clientUrls' | 'peerUrls'>, snapshot: WorkloadSnapshot): EtcdPod | undefined {
  const byName = member.name ? snapshot.pods.find((p) => p.name === `etcd-${member.name.toLowerCase()}`) : undefined;
  if (byName) return byName;
  const byUrl = snapshot.pods.find((p) => p.clientUrl !== undefined && member.clientUrls.includes(p.clientUrl));
  if (byUrl) return byUrl;
  const hosts = member.peerUrls.flatMap((url) => urlHost(url) ?? []);
  const byIp = snapshot.pods.filter((p) => p.podIp !== undefined && hosts.includes(p.podIp.toLowerCase()));
  return byIp.length === 1 ? byIp[0] : undefined;
}

const asNodeAddresses = (node: WorkloadNode) => ({
  metadata: { name: node.name },
  status: { addresses: node.internalIps.map((address) => ({ type: 'InternalIP', address })) },
});

/** The member's Node name: its pod's, else the Node matched by name or InternalIP. */
function nodeNameOf(member: MemberInfo, pod: EtcdPod | undefined, snapshot: WorkloadSnapshot): string | undefined {
  if (pod) return pod.nodeName;
  return nodeOfMember(member, snapshot.nodes.map(asNodeAddresses))?.metadata.name;
}

export function hostEvidence(member: MemberInfo, snapshot: WorkloadSnapshot, machines?: readonly MachineRef[]): HostEvidence {
  const pod = podOfMember(member, snapshot);
  const node = nodeNameOf(member, pod, snapshot);
  const machine = node === undefined ? undefined : machines?.find((m) => m.nodeName === node);
  const found = node === undefined ? undefined : snapshot.nodes.find((n) => n.name === node);
  return {
    ...(node === undefined ? {} : { node }),
    nodeExists: found !== undefined,
    ...(found?.cordoned ? { cordoned: true } : {}),
    ...(pod ? { pod: `${pod.namespace}/${pod.name}` } : {}),
    ...(machine ? { machine: { name: machine.name, deleting: machine.deleting, ...(machine.upToDate === false ? { outdated: true } : {}) } } : {}),
  };
}

const readiness = (node: WorkloadNode | undefined): number => (node?.ready === true ? 0 : node?.ready === undefined ? 1 : 2);

/**
 * Every pod the relay's etcdctl may run in for this member, in the order to try them: those on
 * other Nodes that exist, Ready first (its kubelet posts status), then Ready unknown, then not
 * Ready, by name within each; the target's own pod last. The pod named `answeredLast` (it
 * relayed for this member before) goes first, wherever the order put it.
 */
export function relayCandidates(member: MemberInfo, snapshot: WorkloadSnapshot, answeredLast?: string): EtcdPod[] {
  const own = podOfMember(member, snapshot);
  const nodeOf = (pod: EtcdPod) => snapshot.nodes.find((n) => n.name === pod.nodeName);
  const others = snapshot.pods
    .filter((pod) => pod !== own && pod.nodeName !== own?.nodeName && nodeOf(pod) !== undefined)
    .sort((a, b) => readiness(nodeOf(a)) - readiness(nodeOf(b)) || a.name.localeCompare(b.name));
  const ordered = own && nodeOf(own) ? [...others, own] : others;
  const last = ordered.find((pod) => pod.name === answeredLast);
  return last ? [last, ...ordered.filter((pod) => pod !== last)] : ordered;
}

/** The first relay to try for a member: see relayCandidates. */
export const relayFor = (member: MemberInfo, snapshot: WorkloadSnapshot, answeredLast?: string): EtcdPod | undefined =>
  relayCandidates(member, snapshot, answeredLast)[0];

/**
 * The endpoint for a member over a kube path; undefined when the snapshot offers none. Over
 * exec-relay it names the first relay to try (`answeredLast` first, see relayCandidates).
 */
export function resolveKubePath(member: MemberInfo, path: PathName, snapshot: WorkloadSnapshot, answeredLast?: string): string | undefined {
  if (path === 'port-forward') {
    const pod = podOfMember(member, snapshot);
    return pod ? portForwardEndpoint(pod) : undefined;
  }
  if (path === 'exec-relay') {
    const url = member.clientUrls[0];
    const relay = relayFor(member, snapshot, answeredLast);
    return url && relay ? execRelayEndpoint(url, relay) : undefined;
  }
  return undefined;
}

/** Seeds for a member list when no client URL is known yet: every etcd pod, over each kube path. */
export function kubeSeeds(snapshot: WorkloadSnapshot, paths: readonly PathName[]): EndpointTarget[] {
  return paths.flatMap((path) =>
    snapshot.pods.flatMap((pod): EndpointTarget[] => {
      if (path === 'port-forward') return [{ endpoint: portForwardEndpoint(pod), path }];
      // The pod's own etcdctl, aimed at its own member: no other pod is needed to list.
      if (path === 'exec-relay' && pod.clientUrl) return [{ endpoint: execRelayEndpoint(pod.clientUrl, pod), path }];
      return [];
    }),
  );
}
