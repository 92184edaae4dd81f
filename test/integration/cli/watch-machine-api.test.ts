// `watch` reads Cluster API in the version the management cluster serves, from its discovery: the
// real binary against the FAKE management API server, which serves v1beta2 and v1beta1 as Cluster
// API v1.11 on does (and converts between them, capi-conversion.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { killService, runCli, startCli, type Service } from './support.ts';
import { WATCHING } from './watch-support.ts';

describe.sequential("etcd-remediator watch: Cluster API's version", () => {
  let fake: KubeApiFake;
  let dir: string;
  let service: Service | undefined;
  beforeAll(async () => {
    fake = await startKubeApiFake();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-machine-api-'));
  });
  afterAll(async () => {
    await killService(service);
    await fake?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const watch = (name: string, more: string[] = []): Service =>
    (service = startCli(['watch', '--kubeconfig', fake.writeKubeconfig(path.join(dir, `k-${name}`)), '--state', path.join(dir, `${name}.sqlite`), ...more]));

  const stops = async (running: Service): Promise<void> => {
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
  };

  it('discovery lists v1beta2: the watcher reads it, says so, and reads Machines through it', async () => {
    const running = watch('discovered');
    await running.waitForStderr(WATCHING);
    expect(running.stderr()).toMatch(/^watching EtcdRemediationRequests;.*; Cluster API v1beta2$/m);
    expect(fake.requests.some((r) => r.method === 'GET' && r.path === '/apis')).toBe(true);
    await stops(running);
  });

  it('--machine-api v1beta1 where the cluster serves it: v1beta1', async () => {
    const running = watch('asked', ['--machine-api', 'v1beta1']);
    await running.waitForStderr(WATCHING);
    expect(running.stderr()).toMatch(/; Cluster API v1beta1$/m);
    await stops(running);
  });

  it('a discovery that fails: said once, asked again, and watching once it answers', async () => {
    const refused = fake.failNext({
      method: 'GET',
      path: /^\/apis$/,
      status: 503,
      times: 1_000,
      message: 'the server is currently unable to handle the request',
    });
    try {
      const running = watch('retried');
      await running.until(() => (refused.fired >= 2 ? true : undefined), 'discovery asked twice', 20_000);
      expect(running.stderr().match(/Cluster API's versions not read yet/g)).toHaveLength(1);
      expect(running.stderr()).toContain('the server is currently unable to handle the request');
      expect(running.stderr()).not.toMatch(WATCHING);
      refused.clear();
      await running.waitForStderr(WATCHING, 40_000);
      await stops(running);
    } finally {
      refused.clear();
    }
  }, 60_000);

  it('--machine-api of another version: refused, naming the flag, before anything starts', async () => {
    const run = await runCli([
      'watch',
      '--kubeconfig',
      fake.writeKubeconfig(path.join(dir, 'k-bad')),
      '--state',
      path.join(dir, 'bad.sqlite'),
      '--machine-api',
      'v1alpha4',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('etcd-remediator: --machine-api: "v1alpha4" is not v1beta2 or v1beta1\n');
  });
});
