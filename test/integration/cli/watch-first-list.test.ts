// `watch` says it is watching only once its first list of EtcdRemediationRequests came back: the
// real binary against the FAKE management API server refusing the lists, then serving them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { killService, startCli, type Service } from './support.ts';
import { WATCHING } from './watch-support.ts';

const NOT_WATCHING = /^not watching EtcdRemediationRequests yet: (.+)$/m;
const FORBIDDEN =
  'etcdremediationrequests.etcd-remediator.io is forbidden: User "system:serviceaccount:etcd-remediator-system:etcd-remediator" cannot list resource "etcdremediationrequests"';

describe.sequential('etcd-remediator watch before its first list', () => {
  let fake: KubeApiFake;
  let dir: string;
  let service: Service | undefined;
  beforeAll(async () => {
    fake = await startKubeApiFake();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-first-list-'));
  });
  afterAll(async () => {
    await killService(service);
    await fake?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('while the lists are refused, says it is not watching, why, and that it keeps trying; once one comes back, that it is watching', async () => {
    const refused = fake.failNext({ method: 'GET', path: /\/etcdremediationrequests$/, status: 403, times: 1_000, message: FORBIDDEN });
    try {
      const running = (service = startCli(['watch', '--kubeconfig', fake.writeKubeconfig(path.join(dir, 'k1')), '--state', path.join(dir, 'state-1.sqlite')]));
      await running.waitForStderr(/^(not )?watching EtcdRemediationRequests/m);
      expect(running.stderr()).not.toMatch(WATCHING);
      const why = NOT_WATCHING.exec(running.stderr())?.[1] ?? '';
      expect(why).toContain('is forbidden: User');
      expect(why).toMatch(/it keeps trying until a list comes back$/);
      expect(why, 'it says once that it tries again').not.toContain('starting it again');

      refused.clear();
      await running.waitForStderr(WATCHING, 20_000);
      const served = fake.requests.filter((r) => r.method === 'GET' && !r.watch && r.path.endsWith('/etcdremediationrequests') && r.injected === undefined);
      expect(served.length).toBeGreaterThanOrEqual(1);
      expect(running.stderr().match(new RegExp(NOT_WATCHING.source, 'gm'))).toHaveLength(1);
      expect(running.stderr().search(NOT_WATCHING)).toBeLessThan(running.stderr().search(WATCHING));
      running.child.kill('SIGTERM');
      expect(await running.exited).toBe(0);
    } finally {
      refused.clear();
    }
  }, 60_000);

  it('lists refused again and again do not end the service: it keeps listing until SIGTERM, then exits 0', async () => {
    const refused = fake.failNext({ method: 'GET', path: /\/etcdremediationrequests$/, status: 403, times: 1_000, message: FORBIDDEN });
    try {
      const running = (service = startCli(['watch', '--kubeconfig', fake.writeKubeconfig(path.join(dir, 'k2')), '--state', path.join(dir, 'state-2.sqlite')]));
      // The informer backs off 1 s, then 2 s: a third list is some 3 s on.
      await running.until(() => (refused.fired >= 3 || running.child.exitCode !== null ? true : undefined), 'a third list to be refused', 20_000);
      expect(running.child.exitCode, running.stderr()).toBeNull();
      running.child.kill('SIGTERM');
      expect(await running.exited).toBe(0);
      expect(running.stderr()).toMatch(/^SIGTERM: stopping$/m);
    } finally {
      refused.clear();
    }
  }, 60_000);

  it('a first list that comes back: watching at once, and no word of not watching', async () => {
    const running = (service = startCli(['watch', '--kubeconfig', fake.writeKubeconfig(path.join(dir, 'k3')), '--state', path.join(dir, 'state-3.sqlite')]));
    await running.waitForStderr(WATCHING);
    expect(running.stderr()).not.toMatch(NOT_WATCHING);
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
  });
});
