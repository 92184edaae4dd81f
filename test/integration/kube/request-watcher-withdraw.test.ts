// A request deleted while a step holds its incident: the watcher asks again for the incident to be
// withdrawn, backing off, for a bounded time; then it says the incident goes on and stops asking.
// The FAKE API server's watch, a real SQLite store, and an incident whose step lease never lapses.
import { describe, expect, it } from 'vitest';
import type { Log } from '../../../functions/ports/log.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startRequestWatcher, type RequestWatcher } from '../../../infra/kubernetes/request-watcher.ts';
import { startKubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { requestsIn } from './remediation-requests.ts';
import { namespacedClusterId, reportsToStore, tempStore } from './store-reports.ts';
import { tearDownAfterEach } from './teardown.ts';

const teardown = tearDownAfterEach();

describe('request watcher: a deleted request whose incident a step holds', () => {
  it('asks to withdraw it until withdrawWithinMs has passed, then says the incident goes on', async () => {
    const fake = await startKubeApiFake();
    teardown.push(() => fake.stop());
    // The request's Machine stands: deleting the request is its MachineHealthCheck's withdrawal.
    fake.addControlPlaneNode({ name: 'cp-1', internalIp: '10.0.0.11', machine: { name: 'wl-cp-1', namespace: 'default', clusterName: 'wl' } });
    const store = tempStore('request-withdraw-', teardown);
    const warned: { message: string; fields: Record<string, unknown> }[] = [];
    const quiet = () => undefined;
    const log: Log = { debug: quiet, info: quiet, error: quiet, warn: (message, fields = {}) => void warned.push({ message, fields }) };
    let incidentId = '';
    // The report opens an incident, and a step takes it at once and never lets go.
    const { sink } = reportsToStore(store, {
      async opened(incident) {
        incidentId = incident.incidentId;
        const held = { key: 'probe-members@0', until: Date.now() + 3_600_000 };
        await store.updateIncident(incidentId, { inFlight: held }, { expectVersion: incident.version, now: Date.now() });
      },
    });
    const watcher: RequestWatcher = startRequestWatcher({
      management: fake.kubeConfig(),
      runtime: sink,
      clusterIdOf: namespacedClusterId,
      log,
      followIntervalMs: 100,
      withdrawWithinMs: 1_000,
    });
    teardown.push(() => watcher.stop());
    await watcher.ready;

    const requests = requestsIn(fake.kubeConfig(), 'default');
    await requests.create('wl-cp-1', 'wl');
    await requests.statusWith('wl-cp-1', (s) => Boolean(s.incidentId), 'the request to be followed');
    const deletedAt = Date.now();
    await requests.remove('wl-cp-1');

    const gaveUp = await waitFor(async () => warned.find((w) => w.message.startsWith('request deleted, but its incident')), {
      timeoutMs: 10_000,
      what: 'the watcher to stop asking',
    });
    expect(Date.now() - deletedAt).toBeGreaterThanOrEqual(1_000);
    expect(gaveUp.message).toBe('request deleted, but its incident was not withdrawn: a step held it all along; the incident goes on');
    expect(gaveUp.fields).toMatchObject({ request: 'default/wl-cp-1', incidentId, withinMs: 1_000 });
    // Asked again and again, backing off (at 0, 0.1, 0.3 and 0.7 s; the next, at 1.5 s, is past the bound).
    expect(gaveUp.fields.tries).toBeGreaterThanOrEqual(2);
    expect(gaveUp.fields.tries).toBeLessThanOrEqual(5);
    expect((await store.getIncident(incidentId))?.state).toBe('open');
  });
});
