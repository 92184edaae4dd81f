// A request whose own incident ended as a duplicate of another (both resolved the same member at
// once, and the second to resolve it closed DUPLICATE_INCIDENT) goes on in the incident that holds
// the member: its status names that one and follows it to its end, never Completed before the
// Machine is replaced; deleting the request leaves that incident, another report's, alone. The
// runtime is a stand-in whose report opens an incident in a real store; the endings are written
// into the store as the steps write them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { createInProcessBus } from '../../../functions/adapters/local/in-process-bus.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { systemClock } from '../../../functions/adapters/local/system-clock.ts';
import type { Decision } from '../../../functions/core/decision.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import type { Scheduler } from '../../../functions/ports/scheduler.ts';
import { startRequestWatcher } from '../../../infra/local/request-watcher.ts';
import { startKubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { isObject } from '../../support/fakes/kube/patch.ts';

const noScheduler: Scheduler = { schedule: () => Promise.resolve(), cancel: () => Promise.resolve() };
const coordinates = { group: REQUEST_GROUP, version: REQUEST_VERSION, namespace: 'default', plural: REQUEST_PLURAL };
const CLUSTER_ID = 'default/wl';
const MACHINE = 'wl-cp-1';

interface Status {
  phase?: string;
  reasonCode?: string;
  message?: string;
  incidentId?: string;
}

const teardown: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of teardown.splice(0).reverse()) await step();
});

async function setUp() {
  const fake = await startKubeApiFake();
  teardown.push(() => fake.stop());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watcher-holder-'));
  teardown.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const store: SqliteIncidentStore = openSqliteStore({ path: path.join(dir, 'state.sqlite') });
  teardown.push(() => store.close());
  const said: string[] = [];
  const record = (message: string) => void said.push(message);
  const watcher = startRequestWatcher({
    management: fake.kubeConfig(),
    runtime: {
      store,
      bus: createInProcessBus({ handlers: {}, onDeadLetter: () => undefined, onError: () => undefined }),
      scheduler: noScheduler,
      clock: systemClock,
      async submit(detail) {
        const { clusterId, target } = detail as { clusterId: string; target: { machineName: string } };
        await store.openOrJoin({ clusterId, targetKey: `machineName=${target.machineName}`, target, reason: 'test', now: Date.now() });
      },
    },
    clusterIdOf: (request) => `${request.namespace}/${request.clusterName}`,
    log: { debug: record, info: record, warn: record, error: record },
    followIntervalMs: 100,
    restartDelayMs: 20,
  });
  teardown.push(() => watcher.stop());
  await watcher.ready;
  const objects = fake.kubeConfig().makeApiClient(CustomObjectsApi);
  const phases: string[] = [];
  const unsubscribe = fake.store.subscribe(({ object }) => {
    const phase = isObject(object.status) ? object.status.phase : undefined;
    if (isObject(object.metadata) && object.metadata.name === MACHINE && typeof phase === 'string' && phases.at(-1) !== phase) phases.push(phase);
  });
  teardown.push(async () => void unsubscribe());
  /** Ends an incident as a step does: its state, its decision and result. */
  const end = async (incident: Incident, state: 'closed' | 'remediated', decision: Decision): Promise<void> => {
    const now = (await store.getIncident(incident.incidentId))!;
    await store.updateIncident(incident.incidentId, { state, lastDecision: decision, result: decision }, { expectVersion: now.version, now: Date.now() });
  };
  return {
    store,
    said,
    phases,
    end,
    create: () =>
      objects.createNamespacedCustomObject({
        ...coordinates,
        body: { apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`, kind: 'EtcdRemediationRequest', metadata: { name: MACHINE, labels: { 'cluster.x-k8s.io/cluster-name': 'wl' } }, spec: {} },
      }),
    remove: () => objects.deleteNamespacedCustomObject({ ...coordinates, name: MACHINE }),
    statusWith: (wanted: (s: Status) => boolean, what: string) =>
      waitFor(async () => {
        const { status } = (await objects.getNamespacedCustomObject({ ...coordinates, name: MACHINE })) as { status?: Status };
        return status && wanted(status) ? status : undefined;
      }, { timeoutMs: 10_000, intervalMs: 25, what }),
  };
}

describe('a request whose incident ended as a duplicate of another', () => {
  it('follows the incident that holds its member, named, to its end: Running while that one runs, Completed only once it replaced the Machine', async () => {
    const t = await setUp();
    // Another report of the member, by its Node: that incident holds it.
    const { incident: holder } = await t.store.openOrJoin({ clusterId: CLUSTER_ID, targetKey: 'nodeName=cp-1', target: { nodeName: 'cp-1' }, reason: 'Node NotReady', now: Date.now() });
    await t.create();
    const own = await t.statusWith((s) => s.incidentId !== undefined && s.incidentId !== holder.incidentId, 'the request to follow its own incident');

    const duplicate: Decision = {
      kind: 'close',
      reason: 'DUPLICATE_INCIDENT',
      message: `etcd member cp-1 is already being remediated by incident ${holder.incidentId} (reported as nodeName cp-1); this report is recorded there, and this incident ends.`,
      evidence: { incidentId: holder.incidentId },
    };
    await t.end((await t.store.getIncident(own.incidentId!))!, 'closed', duplicate);
    const following = await t.statusWith((s) => s.incidentId === holder.incidentId, 'the request to follow the incident that holds its member');
    expect(following.phase).toBe('Running');
    expect(following.message).toContain(`Incident ${holder.incidentId} (reported as nodeName cp-1) holds this Machine's etcd member`);

    const approved: Decision = { kind: 'approve', reason: 'TARGET_IS_FOLLOWER', leaderMove: 'not-needed', message: 'cp-1 is a follower', evidence: {} };
    await t.end(holder, 'remediated', approved);
    const done = await t.statusWith((s) => s.phase === 'Completed', 'the request to complete with the incident it follows');
    expect(done.incidentId).toBe(holder.incidentId);
    expect(done.message).toContain('the Machine is being replaced');
    // Completed only once, at the end; never Recovered.
    expect(t.phases.filter((p) => p === 'Completed' || p === 'Recovered')).toEqual(['Completed']);
    expect(t.phases.at(-1)).toBe('Completed');
  });

  it('deleting the request leaves the incident it follows alone: that one is another report’s', async () => {
    const t = await setUp();
    const { incident: holder } = await t.store.openOrJoin({ clusterId: CLUSTER_ID, targetKey: 'nodeName=cp-1', target: { nodeName: 'cp-1' }, reason: 'Node NotReady', now: Date.now() });
    await t.create();
    const own = await t.statusWith((s) => s.incidentId !== undefined && s.incidentId !== holder.incidentId, 'the request to follow its own incident');
    await t.end((await t.store.getIncident(own.incidentId!))!, 'closed', { kind: 'close', reason: 'DUPLICATE_INCIDENT', message: 'duplicate', evidence: { incidentId: holder.incidentId } });
    await t.statusWith((s) => s.incidentId === holder.incidentId, 'the request to follow the incident that holds its member');

    await t.remove();
    await waitFor(async () => (t.said.some((m) => m.startsWith('request deleted')) ? true : undefined), { timeoutMs: 10_000, what: 'the watcher to see the request deleted' });
    expect(t.said.filter((m) => m.startsWith('request deleted'))).toEqual(["request deleted; the incident it followed is another report's, and goes on"]);
    const after = await t.store.getIncident(holder.incidentId);
    expect(after).toMatchObject({ state: 'open' });
    expect(after?.lastDecision).toBeUndefined();
  });
});
