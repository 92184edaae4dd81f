// One member's scrape, wherever its /metrics are reached: the GET of the text and the Status at
// once, under one deadline, parsed into leader hygiene's MemberScrape, each failure naming the
// member, what was asked where and what failed. The direct adapter (member-metrics.ts) and the
// kube one (adapters/kube/kube-member-metrics.ts) differ only in the URL and how Status is asked.
import http from 'node:http';
import https from 'node:https';
import type { MemberScrape } from '../../core/hygiene/index.ts';
import type { MemberInfo, MemberStatus } from '../../core/common/index.ts';
import { parsePrometheusText } from '../../lib/prometheus-text.ts';
import { withTimeout } from '../../lib/with-timeout.ts';
import type { Clock } from '../../ports/clock.ts';
import type { TlsFiles } from '../../ports/etcd.ts';
import { MemberScrapeError } from '../../ports/member-metrics.ts';
import { scrapeOf } from './metrics-scrape.ts';
import { tlsFaultOf, tlsHint } from './tls-hint.ts';

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
export function getText(url: string, tls: TlsFiles | undefined, signal: AbortSignal): Promise<string> {
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
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error)).trim();

/** A TLS failure's words, with which of the user's files to fix when they named them (as the etcd client says it). */
export function getFailure(url: string, error: unknown, tls: TlsFiles | undefined): string {
  const message = messageOf(error);
  if (!url.startsWith('https:') || !tls?.sources || tlsFaultOf(message) === undefined) return message;
  return `${message} (${tlsHint(message, tls.sources, tls.ca)})`;
}

export interface ScrapeRequest {
  member: MemberInfo;
  /** What to GET, e.g. http://127.0.0.1:2381/metrics. */
  url: string;
  /** How a failure names what was asked (the URL itself, or the pod and port a forward reaches); default `url`. */
  shownAs?: string;
  /** For an https url only. */
  tls?: TlsFiles;
  /** Where Status is asked, for its failure's words. */
  statusAt: string;
  status(deadlineMs: number): Promise<MemberStatus>;
  /** A failed GET's words; default getFailure's. */
  explain?(error: unknown): Promise<string>;
  deadlineMs: number;
  clock: Clock;
}

/** The GET and the Status at once; rejects with a MemberScrapeError only. */
export async function scrapeMember(request: ScrapeRequest): Promise<MemberScrape> {
  const { member, url, deadlineMs } = request;
  const shownAs = request.shownAs ?? url;
  const at = request.clock.now();
  const late = () => new Error(`no answer within the ${deadlineMs} ms deadline`);
  const [text, status] = await Promise.allSettled([withTimeout(deadlineMs, (signal) => getText(url, request.tls, signal), late), request.status(deadlineMs)]);
  if (text.status === 'rejected') {
    const why = request.explain ? await request.explain(text.reason) : getFailure(url, text.reason, request.tls);
    throw new MemberScrapeError(member, shownAs, `GET ${shownAs}: ${why}`, { cause: text.reason });
  }
  if (status.status === 'rejected')
    throw new MemberScrapeError(member, request.statusAt, `Status at ${request.statusAt}: ${messageOf(status.reason)}`, { cause: status.reason });
  try {
    return scrapeOf(member.id, at, parsePrometheusText(text.value), status.value);
  } catch (error) {
    throw new MemberScrapeError(member, shownAs, `GET ${shownAs}: ${messageOf(error)}`, { cause: error });
  }
}
