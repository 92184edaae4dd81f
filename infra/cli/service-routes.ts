// GET /metrics and GET /healthz, as `run` serves them beside /events and `watch` beside /readyz.
// /metrics is behind the listener's rules (a bearer token, or an owner-only socket) as /events is:
// its series name clusters, members and reasons. /healthz needs no token: a kubelet's probe cannot
// send one, and it says no more than ok or why not.
import type http from 'node:http';
import type { IncidentStore } from '../../functions/ports/incident-store.ts';
import type { StateOutage } from '../../functions/adapters/local/sqlite-context.ts';
import type { PrometheusMetrics } from '../runtime/prometheus-metrics.ts';
import { escapeControls } from './control-chars.ts';

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function plain(res: http.ServerResponse, status: number, text: string): void {
  const body = `${escapeControls(text)}\n`;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

/** The exposition; 503 saying why when the state file cannot be read for the incidents gauge. */
export async function replyMetrics(res: http.ServerResponse, metrics: PrometheusMetrics): Promise<void> {
  let text: string;
  try {
    text = await metrics.text();
  } catch (error) {
    return plain(res, 503, `metrics not read: the state store did not answer: ${messageOf(error)}`);
  }
  res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

/** What /healthz reads of the runtime's store. */
export interface HealthStore {
  readonly outage: StateOutage | undefined;
  getIncident: IncidentStore['getIncident'];
}

/**
 * Why the service is not healthy, in one line, or undefined: the state file takes writes (a full
 * disk or a failing one holds every incident, as run's stderr says once) and answers a point read.
 */
export async function storeHealth(store: HealthStore): Promise<string | undefined> {
  const outage = store.outage;
  if (outage) return `the state file refuses writes since ${new Date(outage.since).toISOString()}: ${outage.error.message}`;
  try {
    await store.getIncident('healthz');
    return undefined;
  } catch (error) {
    return `the state store did not answer: ${messageOf(error)}`;
  }
}

/** 200 ok, or 503 with the reason; GET and HEAD only. */
export async function replyHealth(req: http.IncomingMessage, res: http.ServerResponse, health: () => Promise<string | undefined>): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, `${req.method ?? ''} not allowed (GET /healthz)`);
  const why = await health().catch((error: unknown) => `the health check failed: ${messageOf(error)}`);
  return why === undefined ? plain(res, 200, 'ok') : plain(res, 503, why);
}
