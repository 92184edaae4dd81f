// `watch --metrics-token-file`: /metrics on the --health-addr listener, by the rules of run's: the
// bearer token or nothing (401, none of the series), while the kubelet's probes need none. The real
// binary against the FAKE management API server; what the series count is run-metrics.test.ts's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricTable, prometheusName } from '../../../functions/core/incident/metric-names.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { parseExposition } from '../../support/prometheus-text.ts';
import { killService, runCli, startCli, type Service } from './support.ts';
import { WATCHING } from './watch-support.ts';

const TOKEN = 'watch-metrics-token-2b7e9d4c6a1f3085';

describe.sequential('etcd-remediator watch: /metrics', () => {
  let fake: KubeApiFake;
  let dir: string;
  let kubeconfig: string;
  let tokenFile: string;
  const services: Service[] = [];
  const state = () => path.join(dir, `state-${services.length}.sqlite`);
  const start = (args: string[]): Service => {
    const service = startCli(['watch', '--kubeconfig', kubeconfig, '--state', state(), ...args]);
    services.push(service);
    return service;
  };
  const healthUrl = async (service: Service): Promise<URL> => new URL((await service.waitForStderr(/health on (http:\/\/\S+):/))[1]!);

  beforeAll(async () => {
    fake = await startKubeApiFake();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-metrics-'));
    kubeconfig = fake.writeKubeconfig(path.join(dir, 'management.kubeconfig'));
    tokenFile = path.join(dir, 'metrics.token');
    fs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    for (const service of services) await killService(service);
    await fake?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves every series of the metric table to the token only; the probes need none', async () => {
    const service = start(['--health-addr', '0', '--metrics-token-file', tokenFile]);
    const url = await healthUrl(service);
    for (const headers of [{}, { authorization: 'Bearer not-the-token-but-long-enough' }]) {
      const refused = await fetch(new URL('/metrics', url), { headers });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      expect(await refused.text()).not.toContain('etcd_remediator_');
    }
    expect((await fetch(new URL('/healthz', url))).status).toBe(200);

    // While the service starts (discovery, the runtime) an authorized scrape is 503; once it watches, the series.
    await service.waitForStderr(WATCHING);
    const scraped = await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scraped.status).toBe(200);
    const names = new Set(parseExposition(await scraped.text()).map((f) => f.name));
    for (const row of metricTable) expect(names.has(prometheusName(row).replace(/_total$/, '')), prometheusName(row)).toBe(true);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.stderr() + service.stdout()).not.toContain(TOKEN);
  });

  it('without the flag /metrics is not served, and says how; the flag needs --health-addr and a file only its owner reads', async () => {
    const service = start(['--health-addr', '0']);
    const url = await healthUrl(service);
    const missing = await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect([missing.status, (await missing.text()).trim()]).toEqual([404, 'not found: /metrics (GET /healthz or /readyz; /metrics with --metrics-token-file)']);

    const noListener = await runCli(['watch', '--kubeconfig', kubeconfig, '--state', state(), '--metrics-token-file', tokenFile]);
    expect(noListener.code).toBe(2);
    expect(noListener.stderr).toContain('--metrics-token-file: needs --health-addr, the listener /metrics is served on');

    const open = path.join(dir, 'open.token');
    fs.writeFileSync(open, TOKEN, { mode: 0o644 });
    fs.chmodSync(open, 0o644);
    const readable = await runCli(['watch', '--kubeconfig', kubeconfig, '--state', state(), '--health-addr', '0', '--metrics-token-file', open]);
    expect(readable.code).toBe(2);
    expect(readable.stderr).toContain(`--metrics-token-file ${open}: is readable or writable by others (mode 644); chmod 600 it`);
    expect(readable.stderr).not.toContain(TOKEN);
  });
});
