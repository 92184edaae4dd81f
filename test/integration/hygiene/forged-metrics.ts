// A /metrics served in front of one lab member's own, each scrape read from the member: passed
// through as etcd wrote it, or forged the way a test asks. 'nan' writes NaN for the WAL fsync
// histogram's first bucket count (a text the scrape must refuse); 'slow-fsync' adds observations
// of about a second to that histogram each scrape (a degraded disk the writes do not pay for).
// What the forging added is kept in every later scrape, so back to 'honest' its counters never
// fall: the next interval reads as a recovery, not a restart.
import { createServer } from 'node:http';
import { serveOnLoopback } from '../../support/fakes/http.ts';

export type MetricsMode = 'honest' | 'nan' | 'slow-fsync';

export interface ForgedMetrics {
  /** The base URL to name in a cluster's metricsUrls. */
  readonly endpoint: string;
  mode: MetricsMode;
  /** The line the last NaN was written on, from 1. */
  readonly nanLine: number | undefined;
  close(): Promise<void>;
}

const FSYNC = 'etcd_disk_wal_fsync_duration_seconds';
/** Observations added a scrape, all in (0.512 s, 1.024 s]: the interval's p99 is near a second. */
const SLOW_PER_SCRAPE = 100;
const SLOW_BOUND = 1.024;
const SLOW_SECONDS = 1;

const BUCKET = new RegExp(`^(${FSYNC}_bucket\\{le="([^"]+)"\\}) (\\S+)$`);
const TOTAL = new RegExp(`^(${FSYNC}_(sum|count)) (\\S+)$`);

export async function forgedMetrics(memberUrl: string): Promise<ForgedMetrics> {
  let added = 0;
  let mode: MetricsMode = 'honest';
  let nanLine: number | undefined;
  const forge = (text: string): string =>
    text
      .split('\n')
      .map((line, i) => {
        const bucket = BUCKET.exec(line);
        if (bucket) {
          const [, name, le, count] = bucket as unknown as [string, string, string, string];
          if (mode === 'nan' && le === '0.001') {
            nanLine = i + 1;
            return `${name} NaN`;
          }
          const bound = le === '+Inf' ? Infinity : Number(le);
          return bound >= SLOW_BOUND ? `${name} ${Number(count) + added}` : line;
        }
        const total = TOTAL.exec(line);
        if (!total) return line;
        const [, name, which, value] = total as unknown as [string, string, string, string];
        return `${name} ${Number(value) + added * (which === 'sum' ? SLOW_SECONDS : 1)}`;
      })
      .join('\n');
  const server = createServer((_request, response) => {
    fetch(`${memberUrl}/metrics`)
      .then(async (answer) => {
        const text = await answer.text();
        if (mode === 'slow-fsync') added += SLOW_PER_SCRAPE;
        response.writeHead(answer.status, { 'content-type': 'text/plain; version=0.0.4' });
        response.end(forge(text));
      })
      .catch((error: unknown) => {
        response.writeHead(502);
        response.end(String(error));
      });
  });
  const served = await serveOnLoopback(server);
  return {
    endpoint: served.endpoint,
    get mode() {
      return mode;
    },
    set mode(next: MetricsMode) {
      mode = next;
    },
    get nanLine() {
      return nanLine;
    },
    close: () => served.close(),
  };
}
