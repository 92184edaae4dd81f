// The exec relay as an etcd member client: etcdctl runs in a healthy member's etcd pod, aimed at
// the target's client URL, so a leader whose kubelet or containerd is down (but whose etcd
// serves) can still be asked for its status and told to hand leadership over.
import type { EtcdFailure, MemberId, MemberInfo, MemberList, MemberStatus } from '../../../core/types.ts';
import { EtcdCallError, type EndpointTarget, type EtcdMemberClient } from '../../../ports/etcd.ts';
import { endpointStatusArgv, isEtcdFailure, moveLeaderArgv, parseEndpointStatus, parseMoveLeader, type EtcdctlTlsPaths, type RelayCall } from './exec-relay-etcdctl.ts';
import { memberListArgv, memberRemoveArgv, parseMemberList, parseMemberRemove } from './exec-relay-members.ts';
import { parseExecRelayEndpoint } from '../kube-paths.ts';
import { PodStreamError, type PodStreams } from '../streams/pod-streams.ts';

export interface ExecRelayOptions {
  /** Certificates inside the relay pod; kubeadm's by default. Never used for a plain-http URL. */
  tls?: EtcdctlTlsPaths;
  /** etcdctl inside the pod (on its PATH by default). */
  binary?: string;
  /** Share of the call's deadline etcdctl gets, the rest being the exec's own round trip. */
  etcdctlShare?: number;
}

type Parsed<T> = T | EtcdFailure;

export function createExecRelayClient(target: EndpointTarget, streams: PodStreams, options: ExecRelayOptions = {}): EtcdMemberClient {
  const { clientUrl, relay } = parseExecRelayEndpoint(target.endpoint);
  const through = `exec relay through ${relay.namespace}/${relay.name}`;
  const share = options.etcdctlShare ?? 0.75;

  const relayCall = (deadlineMs: number): RelayCall => {
    const etcdctlMs = Math.max(1, Math.floor(deadlineMs * share));
    return {
      endpoint: clientUrl,
      commandTimeoutMs: etcdctlMs,
      dialTimeoutMs: etcdctlMs,
      // A plain-http member needs no certificates (and etcdctl would try TLS if given any).
      tls: clientUrl.startsWith('http://') ? null : (options.tls ?? undefined),
      ...(options.binary ? { binary: options.binary } : {}),
    };
  };

  async function run<T extends object>(deadlineMs: number, argv: (call: RelayCall) => string[], parse: (out: string, err: string, code: number | null) => Parsed<T>): Promise<T> {
    let result;
    try {
      result = await streams.exec({ ...relay, container: 'etcd' }, argv(relayCall(deadlineMs)), deadlineMs);
    } catch (error) {
      if (error instanceof PodStreamError) throw new EtcdCallError({ kind: error.reachability, message: error.message }, { cause: error });
      throw error;
    }
    const parsed = parse(result.stdout, result.stderr, result.exitCode);
    // etcd's own words, as etcdctl reported them: the endpoint already names the relay pod.
    if (isEtcdFailure(parsed)) throw new EtcdCallError(parsed);
    return parsed;
  }

  return {
    endpoint: target.endpoint,
    path: target.path,
    status: (deadlineMs): Promise<MemberStatus> => run(deadlineMs, endpointStatusArgv, parseEndpointStatus),
    memberList: (deadlineMs): Promise<MemberList> => run(deadlineMs, memberListArgv, parseMemberList),
    moveLeader: async (transfereeId: MemberId, deadlineMs): Promise<void> => {
      await run(deadlineMs, (call) => moveLeaderArgv(call, transfereeId), parseMoveLeader);
    },
    memberRemove: async (id: MemberId, deadlineMs): Promise<MemberInfo[]> => {
      const members = await run(deadlineMs, (call) => memberRemoveArgv(call, id), (out, err, code) => {
        const parsed = parseMemberRemove(out, err, code);
        return Array.isArray(parsed) ? { members: parsed } : parsed;
      });
      return members.members;
    },
    snapshot: (): Promise<void> =>
      Promise.reject(
        new EtcdCallError({ kind: 'other', message: `${through}: snapshots are not streamed over the exec relay; give the cluster a direct or port-forward path` }),
      ),
  };
}
