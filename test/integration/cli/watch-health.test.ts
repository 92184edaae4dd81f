// `watch --health-addr` as the kubelet's probes see it: the real binary watching the FAKE
// management API server. /healthz says the process is alive; /readyz says the request watch has
// listed and is watching (and the state store answers), and turns 503 while the watch is down.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { killService, runCli, startCli, type Service } from './support.ts';

interface Probe {
  code: number;
  body: string;
}

const probe = async (url: string): Promise<Probe> => {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { code: response.status, body: (await response.text()).trim() };
};

/** A non-loopback IPv4 address of this machine, if it has one. */
const outsideAddress = (): string | undefined =>
  Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

const refused = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });

describe.sequential('etcd-remediator watch --health-addr', () => {
  let fake: KubeApiFake;
  let dir: string;
  let kubeconfig: string;
  const services: Service[] = [];
  const start = (args: string[]): Service => {
    const service = startCli(['watch', '--kubeconfig', kubeconfig, '--state', path.join(dir, `state-${services.length}.sqlite`), ...args]);
    services.push(service);
    return service;
  };
  const healthUrl = async (service: Service): Promise<URL> => new URL((await service.waitForStderr(/health on (http:\/\/\S+):/))[1]!);

  beforeAll(async () => {
    fake = await startKubeApiFake();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-health-'));
    kubeconfig = fake.writeKubeconfig(path.join(dir, 'management.kubeconfig'));
  });
  afterAll(async () => {
    for (const service of services) await killService(service);
    await fake?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an address that is not [HOST:]PORT, naming the flag (exit 2)', async () => {
    for (const bad of ['nonsense', '127.0.0.1:99999', 'http://127.0.0.1:8080']) {
      const run = await runCli(['watch', '--kubeconfig', kubeconfig, '--state', path.join(dir, 'x.sqlite'), '--health-addr', bad]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr.trim().split('\n')).toEqual([
        `etcd-remediator: --health-addr: ${JSON.stringify(bad)} is not [HOST:]PORT (e.g. 8080 for 127.0.0.1:8080, or 0.0.0.0:8080 for the kubelet's probes)`,
      ]);
    }
  });

  it('on loopback by default: alive at once, ready only once the requests are listed and watched, not ready while the watch is down', async () => {
    // The first list fails: the service is alive, but not ready until a list comes back.
    const failedList = fake.failNext({ method: 'GET', path: /\/etcdremediationrequests$/, status: 503, times: 2 });
    const service = start(['--health-addr', '0']);
    const url = await healthUrl(service);
    expect(url.hostname).toBe('127.0.0.1');

    expect(await probe(new URL('/healthz', url).href)).toEqual({ code: 200, body: 'ok' });
    const early = await probe(new URL('/readyz', url).href);
    expect(early.code, early.body).toBe(503);
    expect(early.body).toMatch(/^not ready: (starting|the first list of EtcdRemediationRequests is not in yet|the request watch dropped \(HTTP 503)/);

    await service.until(async () => ((await probe(new URL('/readyz', url).href)).code === 200 ? true : undefined), 'readyz to answer 200', 20_000);
    expect(failedList.fired).toBe(2);
    expect(await probe(new URL('/readyz', url).href)).toEqual({ code: 200, body: 'ready' });

    // The watch drops and the API server refuses new ones: not ready, and it says why; alive all along.
    fake.watchesRefused = true;
    fake.dropWatches('reset');
    const down = await service.until(async () => {
      const answer = await probe(new URL('/readyz', url).href);
      return answer.code === 503 ? answer : undefined;
    }, 'readyz to answer 503 while the watch is down');
    expect(down.body).toMatch(/^not ready: the request watch dropped \(.+\); starting it again$/);
    expect(await probe(new URL('/healthz', url).href)).toEqual({ code: 200, body: 'ok' });

    fake.watchesRefused = false;
    await service.until(
      async () => ((await probe(new URL('/readyz', url).href)).code === 200 ? true : undefined),
      'readyz to answer 200 once the watch is back',
      20_000,
    );

    // Only the two paths, and GET alone.
    expect((await probe(new URL('/metrics', url).href)).code).toBe(404);
    expect((await fetch(new URL('/readyz', url), { method: 'POST', signal: AbortSignal.timeout(5_000) })).status).toBe(405);

    // Loopback only: another address of this machine does not reach it.
    const outside = outsideAddress();
    if (outside) expect(await refused(outside, Number(url.port))).toBe(true);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(await refused('127.0.0.1', Number(url.port))).toBe(true);
  });

  it('on every address when given 0.0.0.0, as the Deployment does for the kubelet', async () => {
    const service = start(['--health-addr', '0.0.0.0:0']);
    const url = await healthUrl(service);
    expect(url.hostname).toBe('0.0.0.0');
    const outside = outsideAddress() ?? '127.0.0.1';
    await service.until(
      async () => ((await probe(`http://${outside}:${url.port}/readyz`)).code === 200 ? true : undefined),
      'readyz on another address to answer 200',
    );
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
