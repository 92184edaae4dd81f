// Which etcd member runs on a Node, and back. kubeadm names the member after the node
// (`etcd --name=<node>`); where the two differ (renamed, custom bootstrap), the member still
// advertises a peer URL on the node's InternalIP. Pure: the caller reads Nodes and members.
import type { MemberInfo } from '../../core/common/index.ts';

/** The part of a V1Node this needs; a client-node V1Node fits. */
export interface NodeAddresses {
  metadata?: { name?: string };
  status?: { addresses?: ReadonlyArray<{ type: string; address: string }> };
}

export type MemberPeers = Pick<MemberInfo, 'name' | 'peerUrls'>;

export function internalIpsOf(node: NodeAddresses): string[] {
  return (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address.toLowerCase());
}

/** A URL's host without IPv6 brackets, or undefined when the URL does not parse. */
export function hostOf(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

function peersOnNode(member: MemberPeers, ips: readonly string[]): boolean {
  return member.peerUrls.some((url) => {
    const host = hostOf(url);
    return host !== undefined && ips.includes(host);
  });
}

/**
 * The member named after the node, else the one whose peer URL is on the node's InternalIP.
 * Two members on one IP are ambiguous: undefined, rather than pick the wrong one to remove.
 */
export function memberOfNode<M extends MemberPeers>(node: NodeAddresses, members: readonly M[]): M | undefined {
  const name = node.metadata?.name;
  const byName = name ? members.find((m) => m.name === name) : undefined;
  if (byName) return byName;
  const ips = internalIpsOf(node);
  const byIp = members.filter((m) => peersOnNode(m, ips));
  return byIp.length === 1 ? byIp[0] : undefined;
}

/** The Node of a member, by the same two rules; undefined when none or several match. */
export function nodeOfMember<N extends NodeAddresses>(member: MemberPeers, nodes: readonly N[]): N | undefined {
  const byName = member.name ? nodes.find((n) => n.metadata?.name === member.name) : undefined;
  if (byName) return byName;
  const byIp = nodes.filter((n) => peersOnNode(member, internalIpsOf(n)));
  return byIp.length === 1 ? byIp[0] : undefined;
}
