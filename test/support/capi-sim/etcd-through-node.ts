// How KCP reaches etcd (pkg/proxy/dial.go and pkg/etcd_client_generator.go): a port-forward to the
// pod etcd-<node> through the workload API server, so through that node's kubelet and container
// runtime. A node whose kubelet or runtime is down, or whose Node object is gone, cannot be dialled;
// the member behind a reachable node answers (or not) as etcd itself does. KCP assumes the member
// name is the Node name.
import { gatewayMemberList, gatewayMemberRemove, gatewayMoveLeader, gatewayStatus } from '../../../infra/lab/etcd-gateway.ts';
import type { ClientTls } from '../../../infra/lab/http-json.ts';
import type { KubeApiFake } from '../fakes/kube/api-server.ts';
import { NODES } from './capi-objects.ts';

/** KCP's --etcd-call-timeout-duration default is 15 s; the simulation's calls are loopback, so shorter. */
const CALL_MS = 3_000;

export interface EtcdMemberView {
  id: string;
  name: string;
  isLearner: boolean;
}

export interface EtcdThroughNodes {
  /** Members and the leader, read through the first node that answers (getCurrentEtcdMembersAndAlarms). */
  read(nodes: readonly string[]): Promise<{ members: EtcdMemberView[]; leaderName: string | undefined }>;
  /** MoveLeader on `fromNode`'s own member, dialled through that node. */
  moveLeader(fromNode: string, toMemberId: string): Promise<void>;
  /** MemberRemove through the first of `viaNodes` that answers. */
  removeMember(memberId: string, viaNodes: readonly string[]): Promise<void>;
}

export function etcdThroughNodes(fake: KubeApiFake, clientUrlOf: (node: string) => string | undefined, tls?: ClientTls): EtcdThroughNodes {
  /** What KCP's dialer meets on the way to the pod: the error it would wrap, or the member's URL. */
  function dial(node: string): string {
    if (!fake.store.find(NODES, '', node)) throw new Error(`could not establish a connection to etcd members hosted on ${node}: nodes "${node}" not found`);
    const fault = fake.faultOf(node);
    if (fault === 'kubelet-down')
      throw new Error(`could not establish a connection to etcd members hosted on ${node}: error dialing backend: dial tcp: connect: connection refused`);
    if (fault === 'containerd-down')
      throw new Error(
        `could not establish a connection to etcd members hosted on ${node}: unable to upgrade connection: rpc error: code = Unavailable desc = connection error: dial unix /var/run/containerd/containerd.sock: connect: connection refused`,
      );
    const url = clientUrlOf(node);
    if (!url) throw new Error(`could not establish a connection to etcd members hosted on ${node}: no etcd pod`);
    return url;
  }
  const withTls = tls ? { tls } : {};
  async function first<T>(nodes: readonly string[], call: (url: string) => Promise<T>): Promise<T> {
    const errors: string[] = [];
    for (const node of nodes) {
      try {
        return await call(dial(node));
      } catch (error) {
        errors.push((error as Error).message);
      }
    }
    throw new Error(errors.length > 0 ? errors.join('; ') : 'no nodes to dial');
  }
  return {
    read: (nodes) =>
      first(nodes, async (url) => {
        const [list, status] = await Promise.all([gatewayMemberList(url, CALL_MS, withTls.tls), gatewayStatus(url, CALL_MS, withTls.tls)]);
        const members = list.map((m) => ({ id: m.id, name: m.name, isLearner: m.isLearner }));
        return { members, leaderName: members.find((m) => m.id === status.leaderId)?.name };
      }),
    moveLeader: (fromNode, toMemberId) => gatewayMoveLeader(dial(fromNode), toMemberId, CALL_MS, withTls.tls),
    removeMember: (memberId, viaNodes) => first(viaNodes, (url) => gatewayMemberRemove(url, memberId, CALL_MS, withTls.tls)),
  };
}
