// Leader hygiene's scrape over the direct path: GET <client URL>/metrics (https with the cluster's
// CA and client certificate, as etcd's client port wants under --client-cert-auth) and the
// maintenance Status through the transport's own cached client, at once, under one deadline.
// A cluster whose metrics are served elsewhere (kubeadm's --listen-metrics-urls) names them by
// member in `metricsUrls`. Every failure names the member, the URL and what failed.
import http from 'node:http';
import https from 'node:https';
import type { MemberInfo, MemberStatus } from '../../core/types.ts';
import { parsePrometheusText } from '../../lib/prometheus-text.ts';
import { withTimeout } from '../../lib/with-timeout.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { EtcdTransport, TlsFiles } from '../../ports/etcd.ts';
import { MemberScrapeError, type MemberMetrics } from '../../ports/member-metrics.ts';
import { systemClock } from '../local/system-clock.ts';
import { scrapeOf } from './metrics-scrape.ts';
import { tlsFaultOf, tlsHint } from './tls-hint.ts';

export interface DirectMemberMetricsOptions {
  /** Status goes through this transport's client for the member's client URL (the probe's). */
  transport: EtcdTransport;
  /** For https URLs only. */
  tls?: TlsFiles;
  /** Where a member's metrics are served, by member name or id, when not on its client URL. */
  metricsUrls?: Readonly<Record<string, string>>;
  clock?: Clock;
}

/** etcd's /metrics is some 150 kB; anything far beyond is not etcd's. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The /metrics URL of a base URL: `/metrics` appended unless it already names a path. */
export function metricsUrlOf(base: string): string {
  const url = new URL(base);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/metrics';
  return url.href;
}

/**
 * GET `url` with a fresh connection (a pooled socket to a cut member would lie), its body as text.
 * Node sends no server name for an IP host, and checks the certificate against the host either way.
 */
function getText(url: string, tls: TlsFiles | undefined, signal: AbortSignal): Promise<string> {
  const secure = url.startsWith('https:');
  const options: https.RequestOptions = {
    agent: false,
    signal,
    ...(secure && tls ? { ca: tls.ca, ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}) } : {}),
  };
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`HTTP ${res.statusCode ?? '?'}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) res.destroy(new Error(`more than ${MAX_BODY_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    };
    const request = secure ? https.get(url, options, onResponse) : http.get(url, options, onResponse);
    request.on('error', reject);
  });
}

/** OpenSSL ends its words with a newline. */
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error)).trim();

/** A TLS failure's words, with which of the user's files to fix when they named them (as the etcd client says it). */
function getFailure(url: string, error: unknown, tls: TlsFiles | undefined): string {
  const message = messageOf(error);
  if (!url.startsWith('https:') || !tls?.sources || tlsFaultOf(message) === undefined) return message;
  return `${message} (${tlsHint(message, tls.sources, tls.ca)})`;
}

/** A cluster's scrape over the direct path: its TLS files and metrics URLs, Status through `transport`. */
export const memberMetricsOf = (cluster: Pick<ClusterEntry, 'tls' | 'metricsUrls'>, transport: EtcdTransport, clock?: Clock): MemberMetrics =>
  createDirectMemberMetrics({ transport, ...(cluster.tls ? { tls: cluster.tls } : {}), ...(cluster.metricsUrls ? { metricsUrls: cluster.metricsUrls } : {}), ...(clock ? { clock } : {}) });

export function createDirectMemberMetrics(options: DirectMemberMetricsOptions): MemberMetrics {
  const clock = options.clock ?? systemClock;
  return {
    async scrape(member: MemberInfo, deadlineMs: number) {
      const clientUrl = member.clientUrls[0];
      if (clientUrl === undefined) throw new MemberScrapeError(member, '', 'has no client URL to scrape');
      const override = options.metricsUrls?.[member.name] ?? options.metricsUrls?.[member.id];
      const url = metricsUrlOf(override ?? clientUrl);
      const at = clock.now();
      const late = () => new Error(`no answer within the ${deadlineMs} ms deadline`);
      const [text, status] = await Promise.allSettled([
        withTimeout(deadlineMs, (signal) => getText(url, options.tls, signal), late),
        options.transport.client({ endpoint: clientUrl, path: 'direct' }).status(deadlineMs),
      ]);
      if (text.status === 'rejected') throw new MemberScrapeError(member, url, `GET ${url}: ${getFailure(url, text.reason, options.tls)}`, { cause: text.reason });
      if (status.status === 'rejected') throw new MemberScrapeError(member, clientUrl, `Status at ${clientUrl}: ${messageOf(status.reason)}`, { cause: status.reason });
      try {
        return scrapeOf(member.id, at, parsePrometheusText(text.value), status.value satisfies MemberStatus);
      } catch (error) {
        throw new MemberScrapeError(member, url, `GET ${url}: ${messageOf(error)}`, { cause: error });
      }
    },
  };
}
