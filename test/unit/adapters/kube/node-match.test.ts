import { describe, expect, it } from 'vitest';
import { hostOf, memberOfNode, nodeOfMember, type NodeAddresses } from '../../../../functions/adapters/kube/node-match.ts';

const node = (name: string, ...ips: string[]): NodeAddresses => ({
  metadata: { name },
  status: { addresses: [...ips.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: name }] },
});
const member = (name: string, ...peerUrls: string[]) => ({ name, peerUrls });

const members = [
  member('cp-1', 'https://10.0.0.11:2380'),
  member('etcd-b', 'https://10.0.0.12:2380'),
  member('etcd-v6', 'https://[fd00::13]:2380'),
  member('', 'https://10.0.0.14:2380'),
];

describe('memberOfNode', () => {
  it('takes the member named after the node, as kubeadm names it', () => {
    expect(memberOfNode(node('cp-1', '10.9.9.9'), members)?.name).toBe('cp-1');
  });

  it("falls back to the member whose peer URL is on the node's InternalIP", () => {
    expect(memberOfNode(node('cp-2', '10.0.0.12'), members)?.name).toBe('etcd-b');
    expect(memberOfNode(node('cp-3', 'FD00::13'), members)?.name).toBe('etcd-v6');
  });

  it('matches an unstarted (unnamed) member by IP only', () => {
    expect(memberOfNode(node('cp-4', '10.0.0.14'), members)?.peerUrls).toEqual(['https://10.0.0.14:2380']);
  });

  it('ignores other address types and unparsable peer URLs', () => {
    const hostnameOnly: NodeAddresses = { metadata: { name: 'x' }, status: { addresses: [{ type: 'ExternalIP', address: '10.0.0.12' }] } };
    expect(memberOfNode(hostnameOnly, members)).toBeUndefined();
    expect(memberOfNode(node('x', '10.0.0.12'), [member('bad', 'not a url')])).toBeUndefined();
  });

  it('refuses to guess when two members share the IP', () => {
    const shared = [member('a', 'http://127.0.0.1:2380'), member('b', 'http://127.0.0.1:12380')];
    expect(memberOfNode(node('lab', '127.0.0.1'), shared)).toBeUndefined();
  });

  it('finds nothing for a node without addresses', () => {
    expect(memberOfNode({ metadata: { name: 'gone' } }, members)).toBeUndefined();
  });
});

describe('nodeOfMember', () => {
  const nodes = [node('cp-1', '10.0.0.11'), node('cp-2', '10.0.0.12')];

  it('finds the node by member name, then by peer URL host', () => {
    expect(nodeOfMember(members[0]!, nodes)?.metadata?.name).toBe('cp-1');
    expect(nodeOfMember(members[1]!, nodes)?.metadata?.name).toBe('cp-2');
    expect(nodeOfMember(members[2]!, nodes)).toBeUndefined();
  });
});

describe('hostOf', () => {
  it('strips IPv6 brackets and the port', () => {
    expect(hostOf('https://[fd00::1]:2380')).toBe('fd00::1');
    expect(hostOf('http://10.0.0.1:2380')).toBe('10.0.0.1');
    expect(hostOf('10.0.0.1:2380')).toBeUndefined();
  });
});
