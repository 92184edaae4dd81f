// The exec relay as an etcd member client: etcdctl runs in a healthy member's etcd pod, aimed at
// the target's client URL, so a leader whose kubelet or containerd is down (but whose etcd
// serves) can still be asked for its status, told to hand leadership over, and defragmented. A read tries every
// etcd pod the last look offered, the endpoint's own first, until one relays; an action (move
// leader, remove a member, defragment) goes only through the endpoint's pod, the one a probe saw answer, so
// what is said of it names the pod it went through.
import type { EtcdFailure, MemberId, MemberInfo, MemberList, MemberStatus } from '../../../core/common/index.ts';
import { EtcdCallError, type EndpointTarget, type EtcdMemberClient } from '../../../ports/etcd.ts';
import { endsTheSearch, everyRelayFailed, relaySliceMs, type RelayAttempt, type RelayCandidate } from './exec-relay-attempts.ts';
import {
  defragArgv,
  endpointStatusArgv,
  isEtcdFailure,
  KUBEADM_ETCDCTL,
  moveLeaderArgv,
  parseDefrag,
  parseEndpointStatus,
  parseMoveLeader,
  type EtcdctlTlsPaths,
  type RelayCall,
} from './exec-relay-etcdctl.ts';
import { memberListArgv, memberRemoveArgv, parseMemberList, parseMemberRemove } from './exec-relay-members.ts';
import type { RelayRoutes } from './exec-relay-routes.ts';
import { execRelayEndpoint, parseExecRelayEndpoint, type PodAddress } from '../kube-paths.ts';
import { PodStreamError, type PodStreams } from '../streams/pod-streams.ts';

export interface ExecRelayOptions {
  /** Certificates inside the relay pod; kubeadm's by default. Never used for a plain-http URL. */
  tls?: EtcdctlTlsPaths;
  /** etcdctl inside the pod: kubeadm's etcd image's (KUBEADM_ETCDCTL) by default. */
  binary?: string;
  /** Share of the call's deadline etcdctl gets, the rest being the exec's own round trip. */
  etcdctlShare?: number;
  /** The other pods a read may go through, and where to say which one answered; the endpoint's own only without. */
  routes?: RelayRoutes;
}

type Parsed<T> = T | EtcdFailure;
type Outcome<T> = { answered: true; value: T } | { answered: false; attempt: RelayAttempt };

const samePod = (a: PodAddress, b: PodAddress): boolean => a.namespace === b.namespace && a.name === b.name;

export function createExecRelayClient(target: EndpointTarget, streams: PodStreams, options: ExecRelayOptions = {}): EtcdMemberClient {
  const { clientUrl, relay: named } = parseExecRelayEndpoint(target.endpoint);
  const through = `exec relay through ${named.namespace}/${named.name}`;
  const share = options.etcdctlShare ?? 0.75;
  const binary = options.binary ?? KUBEADM_ETCDCTL;
  /** Which pod each answer came through, for answeredThrough. */
  const servedBy = new WeakMap<object, string>();

  const relayCall = (deadlineMs: number): RelayCall => {
    const etcdctlMs = Math.max(1, Math.floor(deadlineMs * share));
    return {
      endpoint: clientUrl,
      commandTimeoutMs: etcdctlMs,
      dialTimeoutMs: etcdctlMs,
      // A plain-http member needs no certificates (and etcdctl would try TLS if given any).
      tls: clientUrl.startsWith('http://') ? null : (options.tls ?? undefined),
      binary,
    };
  };

  /** The endpoint's pod first, then the others of the last look, in its order. */
  function relays(): [RelayCandidate, ...RelayCandidate[]] {
    const planned = options.routes?.candidates(clientUrl) ?? [];
    const first = planned.find((pod) => samePod(pod, named)) ?? { ...named, own: false };
    return [first, ...planned.filter((pod) => !samePod(pod, named))];
  }

  /** A relay's failure, said so a person knows what to change when it is the pod's image. */
  function relayFailed(relay: RelayCandidate, error: PodStreamError): RelayAttempt {
    const advice =
      error.why === 'binary-missing'
        ? `; the exec relay runs ${binary}: set --relay-binary (relayBinary in a run config or registration) to the etcdctl this image has, or run an etcd image that has it there (kubeadm's keeps it at ${KUBEADM_ETCDCTL})`
        : '';
    return { relay, side: 'relay', why: error.why, failure: { kind: error.reachability, message: `${error.message}${advice}` } };
  }

  async function once<T extends object>(
    relay: RelayCandidate,
    deadlineMs: number,
    argv: (call: RelayCall) => string[],
    parse: (out: string, err: string, code: number | null) => Parsed<T>,
  ): Promise<Outcome<T>> {
    let result;
    try {
      result = await streams.exec({ namespace: relay.namespace, name: relay.name, container: 'etcd' }, argv(relayCall(deadlineMs)), deadlineMs);
    } catch (error) {
      if (error instanceof PodStreamError) return { answered: false, attempt: relayFailed(relay, error) };
      throw error;
    }
    const parsed = parse(result.stdout, result.stderr, result.exitCode);
    // etcd's own words, as etcdctl reported them: the endpoint names the pod they came through.
    if (isEtcdFailure(parsed)) return { answered: false, attempt: { relay, side: 'target', failure: parsed } };
    options.routes?.answered(clientUrl, relay);
    servedBy.set(parsed, execRelayEndpoint(clientUrl, relay));
    return { answered: true, value: parsed };
  }

  /** Each pod in turn, within the one deadline, until one relays or the answer is the target's own. */
  async function read<T extends object>(
    deadlineMs: number,
    argv: (call: RelayCall) => string[],
    parse: (out: string, err: string, code: number | null) => Parsed<T>,
  ): Promise<T> {
    const endsAt = performance.now() + deadlineMs;
    const candidates = relays();
    const attempts: RelayAttempt[] = [];
    for (const [index, relay] of candidates.entries()) {
      const leftMs = Math.floor(endsAt - performance.now());
      if (index > 0 && leftMs <= 0) throw new EtcdCallError(everyRelayFailed(attempts, candidates.slice(index)));
      const outcome = await once(relay, relaySliceMs(leftMs, candidates.length - index), argv, parse);
      if (outcome.answered) return outcome.value;
      attempts.push(outcome.attempt);
      if (endsTheSearch(outcome.attempt)) break;
    }
    throw new EtcdCallError(everyRelayFailed(attempts));
  }

  /** Through the endpoint's pod only. */
  async function act<T extends object>(
    deadlineMs: number,
    argv: (call: RelayCall) => string[],
    parse: (out: string, err: string, code: number | null) => Parsed<T>,
  ): Promise<T> {
    const outcome = await once(relays()[0], deadlineMs, argv, parse);
    if (!outcome.answered) throw new EtcdCallError(outcome.attempt.failure);
    return outcome.value;
  }

  return {
    endpoint: target.endpoint,
    path: target.path,
    status: (deadlineMs): Promise<MemberStatus> => read(deadlineMs, endpointStatusArgv, parseEndpointStatus),
    memberList: (deadlineMs): Promise<MemberList> => read(deadlineMs, memberListArgv, parseMemberList),
    answeredThrough: (answer) => servedBy.get(answer),
    moveLeader: async (transfereeId: MemberId, deadlineMs): Promise<void> => {
      await act(deadlineMs, (call) => moveLeaderArgv(call, transfereeId), parseMoveLeader);
    },
    memberRemove: async (id: MemberId, deadlineMs): Promise<MemberInfo[]> => {
      const members = await act(
        deadlineMs,
        (call) => memberRemoveArgv(call, id),
        (out, err, code) => {
          const parsed = parseMemberRemove(out, err, code);
          return Array.isArray(parsed) ? { members: parsed } : parsed;
        },
      );
      return members.members;
    },
    defragment: async (deadlineMs): Promise<void> => {
      await act(deadlineMs, defragArgv, parseDefrag);
    },
    snapshot: (): Promise<void> =>
      Promise.reject(
        new EtcdCallError({
          kind: 'other',
          message: `${through}: snapshots are not streamed over the exec relay; give the cluster a direct or port-forward path`,
        }),
      ),
  };
}
