// Leader hygiene's scrape over the direct path: GET <client URL>/metrics (https with the cluster's
// CA and client certificate, as etcd's client port wants under --client-cert-auth) and the
// maintenance Status through the transport's own cached client, at once, under one deadline.
// A cluster whose metrics are served elsewhere (kubeadm's --listen-metrics-urls) names them by
// member in `metricsUrls`. Every failure names the member, the URL and what failed.
import type { MemberInfo } from '../../core/common/index.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { EtcdTransport, TlsFiles } from '../../ports/etcd.ts';
import { MemberScrapeError, type MemberMetrics } from '../../ports/member-metrics.ts';
import { systemClock } from '../../lib/system-clock.ts';
import { metricsUrlOf, scrapeMember } from './metrics-get.ts';

export { metricsUrlOf };

export interface DirectMemberMetricsOptions {
  /** Status goes through this transport's client for the member's client URL (the probe's). */
  transport: EtcdTransport;
  /** For https URLs only. */
  tls?: TlsFiles;
  /** Where a member's metrics are served, by member name or id, when not on its client URL. */
  metricsUrls?: Readonly<Record<string, string>>;
  clock?: Clock;
}

/** A cluster's scrape over the direct path: its TLS files and metrics URLs, Status through `transport`. */
export const memberMetricsOf = (cluster: Pick<ClusterEntry, 'tls' | 'metricsUrls'>, transport: EtcdTransport, clock?: Clock): MemberMetrics =>
  createDirectMemberMetrics({
    transport,
    ...(cluster.tls ? { tls: cluster.tls } : {}),
    ...(cluster.metricsUrls ? { metricsUrls: cluster.metricsUrls } : {}),
    ...(clock ? { clock } : {}),
  });

export function createDirectMemberMetrics(options: DirectMemberMetricsOptions): MemberMetrics {
  const clock = options.clock ?? systemClock;
  return {
    scrape(member: MemberInfo, deadlineMs: number) {
      const clientUrl = member.clientUrls[0];
      if (clientUrl === undefined) return Promise.reject(new MemberScrapeError(member, '', 'has no client URL to scrape'));
      const override = options.metricsUrls?.[member.name] ?? options.metricsUrls?.[member.id];
      return scrapeMember({
        member,
        url: metricsUrlOf(override ?? clientUrl),
        ...(options.tls ? { tls: options.tls } : {}),
        statusAt: clientUrl,
        status: (ms) => options.transport.client({ endpoint: clientUrl, path: 'direct' }).status(ms),
        deadlineMs,
        clock,
      });
    },
  };
}
