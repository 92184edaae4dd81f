// A request deleted while a step holds its incident: the watcher asks again for the incident to be
// withdrawn, backing off, for a bounded time; then it says the incident goes on and stops asking.
// The FAKE API server's watch, a real SQLite store, and an incident whose step lease never lapses.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { Log } from '../../../functions/ports/log.ts';
import { systemClock } from '../../../functions/adapters/local/system-clock.ts';
import type { Scheduler } from '../../../functions/ports/scheduler.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { createInProcessBus } from '../../../functions/adapters/local/in-process-bus.ts';
import { startRequestWatcher, type RequestWatcher } from '../../../infra/local/request-watcher.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { startKubeApiFake } from '../../support/fakes/kube/api-server.ts';

const coordinates = { group: REQUEST_GROUP, version: REQUEST_VERSION, namespace: 'default', plural: REQUEST_PLURAL };
const noScheduler: Scheduler = { schedule: () => Promise.resolve(), cancel: () => Promise.resolve() };

const teardown: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of teardown.splice(0).reverse()) await step();
});

describe('request watcher: a deleted request whose incident a step holds', () => {
  it('asks to withdraw it until withdrawWithinMs has passed, then says the incident goes on', async () => {
    const fake = await startKubeApiFake();
    teardown.push(() => fake.stop());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'request-withdraw-'));
    teardown.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const store = openSqliteStore({ path: path.join(dir, 'state.sqlite') });
    teardown.push(() => store.close());
    const warned: { message: string; fields: Record<string, unknown> }[] = [];
    const quiet = () => undefined;
    const log: Log = { debug: quiet, info: quiet, error: quiet, warn: (message, fields = {}) => void warned.push({ message, fields }) };
    let incidentId = '';
    const watcher: RequestWatcher = startRequestWatcher({
      management: fake.kubeConfig(),
      runtime: {
        store,
        bus: createInProcessBus({ handlers: {}, onDeadLetter: quiet, onError: quiet }),
        scheduler: noScheduler,
        clock: systemClock,
        // The report opens an incident, and a step takes it at once and never lets go.
        async submit(detail) {
          const { clusterId, target } = detail as { clusterId: string; target: { machineName: string } };
          const opened = await store.openOrJoin({ clusterId, targetKey: `machineName=${target.machineName}`, target, reason: 'test', now: Date.now() });
          incidentId = opened.incident.incidentId;
          const held = { key: 'probe-members@0', until: Date.now() + 3_600_000 };
          await store.updateIncident(incidentId, { inFlight: held }, { expectVersion: opened.incident.version, now: Date.now() });
        },
      },
      clusterIdOf: (request) => `${request.namespace}/${request.clusterName}`,
      log,
      followIntervalMs: 100,
      withdrawWithinMs: 1_000,
    });
    teardown.push(() => watcher.stop());
    await watcher.ready;

    const objects = fake.kubeConfig().makeApiClient(CustomObjectsApi);
    await objects.createNamespacedCustomObject({
      ...coordinates,
      body: { apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`, kind: 'EtcdRemediationRequest', metadata: { name: 'wl-cp-1', labels: { 'cluster.x-k8s.io/cluster-name': 'wl' } }, spec: {} },
    });
    const statusOf = async () => ((await objects.getNamespacedCustomObject({ ...coordinates, name: 'wl-cp-1' })) as { status?: { incidentId?: string } }).status;
    await waitFor(async () => ((await statusOf())?.incidentId ? true : undefined), { timeoutMs: 10_000, what: 'the request to be followed' });
    const deletedAt = Date.now();
    await objects.deleteNamespacedCustomObject({ ...coordinates, name: 'wl-cp-1' });

    const gaveUp = await waitFor(async () => warned.find((w) => w.message.startsWith('request deleted, but its incident')), { timeoutMs: 10_000, what: 'the watcher to stop asking' });
    expect(Date.now() - deletedAt).toBeGreaterThanOrEqual(1_000);
    expect(gaveUp.message).toBe('request deleted, but its incident was not withdrawn: a step held it all along; the incident goes on');
    expect(gaveUp.fields).toMatchObject({ request: 'default/wl-cp-1', incidentId, withinMs: 1_000 });
    // Asked again and again, backing off (at 0, 0.1, 0.3 and 0.7 s; the next, at 1.5 s, is past the bound).
    expect(gaveUp.fields.tries).toBeGreaterThanOrEqual(2);
    expect(gaveUp.fields.tries).toBeLessThanOrEqual(5);
    expect((await store.getIncident(incidentId))?.state).toBe('open');
  });
});
