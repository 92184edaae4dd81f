// `watch --health-addr`: liveness and readiness over HTTP, for the kubelet's probes.
//   GET /healthz  200 while the process runs and its event loop turns (a timer has fired lately);
//   GET /readyz   200 once the request watch has listed and is watching and the state store
//                 answers; 503 with the reason otherwise.
//   GET /metrics  with --metrics-token-file, the metric table's series, for that bearer token only
//                 (the probes need none; a scrape names clusters, members and reasons).
// Loopback unless a host is named: the kubelet probes the pod's IP, so the Deployment names 0.0.0.0.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusMetrics } from '../runtime/prometheus-metrics.ts';
import { UsageError } from './args.ts';
import { escapeControls } from './control-chars.ts';
import { bearerCheck } from './run-listen.ts';
import { replyMetrics } from './service-routes.ts';

export interface HealthAddress {
  host: string;
  port: number;
}

/** Says why the service is not ready, or undefined when it is. */
export type ReadinessCheck = () => Promise<string | undefined>;

export interface HealthServer {
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  /** Set once the service has something to be ready for; until then /readyz says it is starting. */
  setReadiness(check: ReadinessCheck): void;
  /**
   * Serves /metrics to a request that carries `token` as its bearer token; until then /metrics is
   * not found, or, when the server was started with the token, 503 while the service starts.
   */
  serveMetrics(metrics: PrometheusMetrics, token: string): void;
  close(): Promise<void>;
}

/** The event loop is stalled when its 1 s timer has not fired for this long. */
const STALLED_MS = 10_000;
const TICK_MS = 1_000;
/** A readiness check that takes longer than this is an answer of its own. */
const READY_CHECK_MS = 5_000;

/** `--health-addr [HOST:]PORT`: undefined when absent; the host is 127.0.0.1 unless given. */
export function healthAddrFlag(value: string | undefined): HealthAddress | undefined {
  if (value === undefined) return undefined;
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[0-9A-Za-z.-]*):)?(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65_535)
    throw new UsageError(`--health-addr: ${JSON.stringify(value)} is not [HOST:]PORT (e.g. 8080 for 127.0.0.1:8080, or 0.0.0.0:8080 for the kubelet's probes)`);
  const host = (match[1] ?? '').replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? '127.0.0.1' : host, port };
}

function reply(response: http.ServerResponse, code: number, text: string): void {
  const body = `${escapeControls(text)}\n`;
  response.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  response.end(body);
}

async function readiness(check: ReadinessCheck | undefined): Promise<string | undefined> {
  if (!check) return 'starting: the request watch is not set up yet';
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>(
    (resolve) => (timer = setTimeout(() => resolve(`the readiness check took longer than ${READY_CHECK_MS / 1_000} s`), READY_CHECK_MS)),
  );
  try {
    return await Promise.race([
      check().catch((error: unknown) => `the readiness check failed: ${error instanceof Error ? error.message : String(error)}`),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** /metrics as `run` refuses a post without its token: 401 saying which, and nothing of the series. */
function metricsFor(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  scrape: { metrics?: PrometheusMetrics; authorized: ReturnType<typeof bearerCheck> },
): void {
  const auth = scrape.authorized(request);
  if (auth !== 'ok') {
    response.setHeader('WWW-Authenticate', 'Bearer');
    return reply(
      response,
      401,
      `${auth === 'missing' ? 'no bearer token' : 'wrong bearer token'}: send Authorization: Bearer <the token of --metrics-token-file>`,
    );
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') return reply(response, 405, `${request.method ?? ''} not allowed (GET /metrics)`);
  if (!scrape.metrics) {
    response.setHeader('Retry-After', '1');
    return reply(response, 503, 'starting: the metrics are served once the service is up');
  }
  void replyMetrics(response, scrape.metrics);
}

/** `metricsToken`: /metrics is the service's from the start, answering 503 until serveMetrics gives it the series. */
export async function startHealthServer(address: HealthAddress, metricsToken?: string): Promise<HealthServer> {
  let lastTick = Date.now();
  const ticker = setInterval(() => (lastTick = Date.now()), TICK_MS);
  ticker.unref();
  let check: ReadinessCheck | undefined;
  let scrape: { metrics?: PrometheusMetrics; authorized: ReturnType<typeof bearerCheck> } | undefined =
    metricsToken === undefined ? undefined : { authorized: bearerCheck(metricsToken) };
  const server = http.createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://health').pathname;
    if (path === '/metrics' && scrape) return metricsFor(request, response, scrape);
    if (path !== '/healthz' && path !== '/readyz')
      return reply(response, 404, `not found: ${path} (GET /healthz or /readyz${path === '/metrics' ? '; /metrics with --metrics-token-file' : ''})`);
    if (request.method !== 'GET' && request.method !== 'HEAD') return reply(response, 405, `${request.method ?? ''} not allowed (GET ${path})`);
    if (path === '/healthz') {
      const stalled = Date.now() - lastTick;
      return stalled > STALLED_MS ? reply(response, 503, `event loop stalled: no timer fired for ${stalled} ms`) : reply(response, 200, 'ok');
    }
    readiness(check).then(
      (why) => (why === undefined ? reply(response, 200, 'ready') : reply(response, 503, `not ready: ${why}`)),
      () => reply(response, 503, 'not ready'),
    );
  });
  // A probe's connection must not keep a stopping service up.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      clearInterval(ticker);
      reject(new UsageError(`--health-addr: cannot listen on ${address.host}:${address.port}: ${error.code ?? error.message}`));
    });
    server.listen({ host: address.host, port: address.port }, resolve);
  });
  const { address: ip, port } = server.address() as AddressInfo;
  return {
    url: `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`,
    setReadiness(next) {
      check = next;
    },
    serveMetrics(metrics, token) {
      scrape = { metrics, authorized: bearerCheck(token) };
    },
    async close() {
      clearInterval(ticker);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
