// Leader hygiene's scrape through Kubernetes. kubeadm's etcd pod runs on the host network with
// --listen-metrics-urls=http://127.0.0.1:2381, so a port-forward to that port of the member's own
// pod reaches its plain metrics listener; Status goes over the port-forward client the kube
// access already keeps for the pod's client port. A pod without a plain metrics URL is read on
// its client port instead, over the same TLS as that client. The exec relay cannot read
// /metrics: kubeadm's etcd image has no shell and no HTTP client, only etcd and etcdctl.
import type { MemberInfo } from '../../core/common/index.ts';
import { withTimeout } from '../../lib/with-timeout.ts';
import type { Clock } from '../../ports/clock.ts';
import type { EndpointTarget, EtcdTransport, TlsFiles } from '../../ports/etcd.ts';
import { MemberScrapeError, type MemberMetrics } from '../../ports/member-metrics.ts';
import { messageOf, metricsUrlOf, scrapeMember } from '../etcd/index.ts';
import { systemClock } from '../../lib/system-clock.ts';
import type { EtcdConnections } from './etcd-connections.ts';
import { podOfMember, portForwardEndpoint } from './kube-paths.ts';
import type { LocalForward, PodStreams } from './streams/pod-streams.ts';
import type { EtcdPod, WorkloadSnapshot } from './workload.ts';

export interface KubeMemberMetricsOptions {
  /** One look at the etcd pods; shared by the scrapes of one round (see SNAPSHOT_REUSE_MS). */
  look(signal: AbortSignal): Promise<WorkloadSnapshot>;
  streams: PodStreams;
  /** The kube access's clients: Status over the pod's port-forward, and what the fallback dials. */
  transport: EtcdTransport;
  connections: Pick<EtcdConnections, 'dial'>;
  clock?: Clock;
}

/** A round scrapes every member at once: they share one read of the pods, and the next round reads again. */
const SNAPSHOT_REUSE_MS = 5_000;

export const RELAY_CANNOT_SCRAPE =
  'it has no etcd pod of its own, so only the exec relay reaches it, and the relay cannot read /metrics (the etcd image has no shell or HTTP client)';

interface Reach {
  url: string;
  shownAs: string;
  tls?: TlsFiles;
  forward?: LocalForward;
}

export function createKubeMemberMetrics(options: KubeMemberMetricsOptions): MemberMetrics {
  const clock = options.clock ?? systemClock;
  let shared: { at: number; snapshot: Promise<WorkloadSnapshot> } | undefined;
  const snapshot = (deadlineMs: number): Promise<WorkloadSnapshot> => {
    const now = performance.now();
    if (shared && now - shared.at < SNAPSHOT_REUSE_MS) return shared.snapshot;
    const read = withTimeout(
      deadlineMs,
      (signal) => options.look(signal),
      () => new Error(`no answer within the ${deadlineMs} ms deadline`),
    );
    const entry = { at: now, snapshot: read };
    shared = entry;
    // A failed read is not kept: the next scrape asks again.
    read.catch(() => shared === entry && (shared = undefined));
    return read;
  };

  /** Where the member's /metrics are reached: its pod's plain metrics port, else its client port over the client's TLS. */
  const reach = async (pod: EtcdPod, client: EndpointTarget): Promise<Reach> => {
    if (pod.metricsPort !== undefined) {
      const forward = await options.streams.forward({ namespace: pod.namespace, name: pod.name }, pod.metricsPort);
      return { url: `http://127.0.0.1:${forward.port}/metrics`, shownAs: `${portForwardEndpoint(pod, pod.metricsPort)}/metrics`, forward };
    }
    const dialed = await options.connections.dial(client);
    if (!dialed) throw new Error(`no port-forward to ${client.endpoint}`);
    return { url: metricsUrlOf(dialed.endpoint), shownAs: `${client.endpoint}/metrics`, ...(dialed.tls ? { tls: dialed.tls } : {}) };
  };

  return {
    async scrape(member: MemberInfo, deadlineMs: number) {
      const started = performance.now();
      const remaining = () => Math.max(1, deadlineMs - (performance.now() - started));
      const pods = await snapshot(deadlineMs).catch((error: unknown) => {
        throw new MemberScrapeError(member, '', `reading the etcd pods: ${messageOf(error)}`, { cause: error });
      });
      const pod = podOfMember(member, pods);
      if (!pod) {
        const clientUrl = member.clientUrls[0];
        if (clientUrl !== undefined && pods.pods.length > 0) throw new MemberScrapeError(member, clientUrl, RELAY_CANNOT_SCRAPE);
        throw new MemberScrapeError(member, '', 'no etcd pod serves it, and /metrics is read through a port-forward to the member’s own pod');
      }
      const client: EndpointTarget = { endpoint: portForwardEndpoint(pod), path: 'port-forward' };
      const sinceMs = performance.now();
      let where: Reach;
      try {
        where = await reach(pod, client);
      } catch (error) {
        throw new MemberScrapeError(member, client.endpoint, `port-forward to ${pod.namespace}/${pod.name}: ${messageOf(error)}`, { cause: error });
      }
      return scrapeMember({
        member,
        url: where.url,
        shownAs: where.shownAs,
        ...(where.tls ? { tls: where.tls } : {}),
        statusAt: client.endpoint,
        status: (ms) => options.transport.client(client).status(ms),
        // The forward read the API server's and the kubelet's answer: "nothing listens on port 2381".
        async explain(error) {
          const failure = (await where.forward?.failuresSince(sinceMs, Math.min(250, remaining())))?.at(-1);
          return failure ? failure.message : messageOf(error);
        },
        deadlineMs: remaining(),
        clock,
      });
    },
  };
}
