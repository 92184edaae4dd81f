// The health listener's /metrics when the service was started with its token: the token is checked
// from the first request, and an authorized scrape before the series exist is 503 with Retry-After
// (not the 404 of a listener without metrics), then the series once they are given.
import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer } from '../../../infra/cli/health.ts';
import { prometheusMetrics } from '../../../infra/runtime/prometheus-metrics.ts';

const TOKEN = 'health-server-token-8c1d2e3f4a5b6c7d';
let health: HealthServer | undefined;
afterEach(async () => {
  await health?.close();
  health = undefined;
});

const scrape = (server: HealthServer, token?: string): Promise<Response> =>
  fetch(new URL('/metrics', server.url), { headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('the health listener while the service starts', () => {
  it('started with the token: 401 without it, 503 with it until the series are given, then 200', async () => {
    const server = (health = await startHealthServer({ host: '127.0.0.1', port: 0 }, TOKEN));
    expect((await scrape(server)).status).toBe(401);
    const starting = await scrape(server, TOKEN);
    expect([starting.status, starting.headers.get('retry-after'), (await starting.text()).trim()]).toEqual([
      503,
      '1',
      'starting: the metrics are served once the service is up',
    ]);
    server.serveMetrics(prometheusMetrics({ liveIncidents: async () => [] }), TOKEN);
    const served = await scrape(server, TOKEN);
    expect(served.status).toBe(200);
    expect(await served.text()).toContain('etcd_remediator_');
  });

  it('started without it: /metrics is not found, as without --metrics-token-file', async () => {
    const server = (health = await startHealthServer({ host: '127.0.0.1', port: 0 }));
    expect((await scrape(server, TOKEN)).status).toBe(404);
  });
});
