// Which etcd pods the exec relay may run etcdctl in for each member, from the latest workload
// look, and which one relayed for it last: that one goes first in the next probe and the next call.
import type { MemberInfo } from '../../../core/common/index.ts';
import { execRelayEndpoint, podOfMember, relayCandidates, type PodAddress } from '../kube-paths.ts';
import type { WorkloadSnapshot } from '../workload.ts';
import type { RelayCandidate } from './exec-relay-attempts.ts';

/** What a relay client reads and tells, keyed by the target member's client URL. */
export interface RelayRoutes {
  /** The pods to try for the member, in order; none before a look named them. */
  candidates(clientUrl: string): readonly RelayCandidate[];
  /** This pod relayed for the member. */
  answered(clientUrl: string, relay: PodAddress): void;
}

export interface RelayPlanner extends RelayRoutes {
  /** The member's exec-relay endpoint in this look (via its first relay), its other relays kept for its calls. */
  endpointFor(member: MemberInfo, snapshot: WorkloadSnapshot): string | undefined;
}

export function createRelayRoutes(): RelayPlanner {
  const planned = new Map<string, RelayCandidate[]>();
  const answeredLast = new Map<string, string>();
  return {
    endpointFor(member, snapshot) {
      const clientUrl = member.clientUrls[0];
      if (clientUrl === undefined) return undefined;
      const own = podOfMember(member, snapshot);
      const candidates = relayCandidates(member, snapshot, answeredLast.get(clientUrl)).map(({ namespace, name }): RelayCandidate => ({
        namespace,
        name,
        own: name === own?.name && namespace === own.namespace,
      }));
      planned.set(clientUrl, candidates);
      const [first] = candidates;
      return first ? execRelayEndpoint(clientUrl, first) : undefined;
    },
    candidates: (clientUrl) => planned.get(clientUrl) ?? [],
    answered(clientUrl, relay) {
      answeredLast.set(clientUrl, relay.name);
    },
  };
}
