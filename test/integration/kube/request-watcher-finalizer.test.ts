// The request's finalizer, etcd-remediator.io/outcome, through the FAKE API server (with its garbage
// collector) and a real SQLite store: added when the watcher takes a request, added again after a
// refused patch; a request collected with its Machine is kept until its outcome is written and
// then released, a refused release tried again; a request its MHC withdrew (the Machine standing)
// is withdrawn and released; one with no outcome is released at the bound, saying so.
import { describe, expect, it } from 'vitest';
import { REQUEST_FINALIZER, REQUEST_GROUP, REQUEST_PLURAL } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { Decision } from '../../../functions/core/common/index.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startRequestWatcher, type RequestWatcherOptions } from '../../../infra/kubernetes/request-watcher.ts';
import { startKubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { text } from '../../support/fakes/kube/patch.ts';
import { metadataOf, resourceType } from '../../support/fakes/kube/store.ts';
import { requestsIn } from './remediation-requests.ts';
import { namespacedClusterId, reportsToStore, tempStore } from './store-reports.ts';
import { tearDownAfterEach } from './teardown.ts';

const teardown = tearDownAfterEach();
const MACHINE = 'wl-cp-1';
const REQUESTS = resourceType(REQUEST_GROUP, REQUEST_PLURAL)!;
const MACHINES = resourceType('cluster.x-k8s.io', 'machines')!;

async function setUp(options: Partial<RequestWatcherOptions> = {}) {
  const fake = await startKubeApiFake({ machineDeletionMs: 50 });
  teardown.push(() => fake.stop());
  fake.addControlPlaneNode({ name: 'cp-1', internalIp: '10.0.0.11', machine: { name: MACHINE, namespace: 'default', clusterName: 'wl' } });
  const machineUid = text(metadataOf(fake.store.get(MACHINES, 'default', MACHINE)).uid);
  const store = tempStore('watcher-finalizer-', teardown);
  const said: string[] = [];
  const record = (message: string) => void said.push(message);
  const watcher = startRequestWatcher({
    management: fake.kubeConfig(),
    runtime: reportsToStore(store).sink,
    clusterIdOf: namespacedClusterId,
    log: { debug: record, info: record, warn: record, error: record },
    followIntervalMs: 100,
    restartDelayMs: 20,
    ...options,
  });
  teardown.push(() => watcher.stop());
  await watcher.ready;
  const requests = requestsIn(fake.kubeConfig(), 'default');
  const request = () => fake.store.find(REQUESTS, 'default', MACHINE);
  const finalizers = () => {
    const found = request();
    return found ? (metadataOf(found).finalizers as string[] | undefined) : undefined;
  };
  return {
    fake,
    store,
    said,
    request,
    finalizers,
    // As MHC creates it: owned by its Machine.
    create: () =>
      requests.create(MACHINE, 'wl', { ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: MACHINE, uid: machineUid }] }),
    followed: () => requests.statusWith(MACHINE, (s) => s.incidentId !== undefined, 'the request to follow its incident', { intervalMs: 25 }),
    held: () => waitFor(async () => (finalizers()?.includes(REQUEST_FINALIZER) ? true : undefined), { timeoutMs: 5_000, what: 'the finalizer' }),
    gone: () => waitFor(async () => (request() ? undefined : true), { timeoutMs: 10_000, what: 'the request to go' }),
    /** The Machine controller finished deleting it: the Machine is gone, and the garbage collector follows. */
    machineGone: () => fake.store.remove(MACHINES, 'default', MACHINE),
    async endIncident(incidentId: string, state: 'closed' | 'completed' | 'awaiting-replacement', decision: Decision) {
      const now = (await store.getIncident(incidentId))!;
      await store.updateIncident(incidentId, { state, lastDecision: decision, result: decision }, { expectVersion: now.version, now: Date.now() });
    },
  };
}

const removed: Decision = { kind: 'approve', reason: 'TARGET_IS_FOLLOWER', leaderMove: 'not-needed', message: 'cp-1 is a follower: removed', evidence: {} };
const joined: Decision = { kind: 'close', reason: 'REPLACEMENT_JOINED', message: 'the replacement joined etcd', evidence: {} };

describe('the request finalizer', () => {
  it('is added when the request is taken, and added again on a later round after the API server refused the patch', async () => {
    const t = await setUp();
    const refused = t.fake.failNext({ method: 'PATCH', path: new RegExp(`/namespaces/default/${REQUEST_PLURAL}/${MACHINE}$`), status: 500 });
    await t.create();
    await t.held();
    expect(refused.fired).toBe(1);
    expect(t.said).toContain('request finalizer not added; tried again on the next round');
    expect(t.finalizers()).toEqual([REQUEST_FINALIZER]);
  });

  it('collected with its Machine: kept, Terminating, while the incident runs and for keepEndedMs after its outcome; a refused release is tried again; then gone', async () => {
    const t = await setUp({ keepEndedMs: 300 });
    await t.create();
    const { incidentId } = await t.followed();
    await t.held();
    await t.endIncident(incidentId!, 'awaiting-replacement', removed);
    t.machineGone();
    await waitFor(async () => (metadataOf(t.request()!).deletionTimestamp ? true : undefined), {
      timeoutMs: 5_000,
      what: 'the garbage collector to mark the request',
    });
    const collected = 'request deleted by the garbage collector after its Machine, which this incident replaces; kept until its outcome is written';
    await waitFor(async () => (t.said.includes(collected) ? true : undefined), { timeoutMs: 5_000, what: 'the watcher to judge the deletion' });
    // Still here while the replacement is awaited: its status still written.
    const awaiting = await requestsIn(t.fake.kubeConfig(), 'default').statusWith(MACHINE, (s) => s.phase === 'AwaitingReplacement', 'AwaitingReplacement');
    expect(awaiting.incidentId).toBe(incidentId);
    const refused = t.fake.failNext({ method: 'PATCH', path: new RegExp(`/namespaces/default/${REQUEST_PLURAL}/${MACHINE}$`), status: 409 });
    const endedAt = Date.now();
    await t.endIncident(incidentId!, 'completed', joined);
    await requestsIn(t.fake.kubeConfig(), 'default').statusWith(MACHINE, (s) => s.phase === 'Completed', 'Completed');
    await t.gone();
    expect(Date.now() - endedAt).toBeGreaterThanOrEqual(300);
    expect(refused.fired).toBe(1);
    expect(t.said).toContain('request finalizer not removed; tried again on the next round');
    // Said once the release's PATCH has answered: the object can be gone before the watcher reads that answer.
    await waitFor(async () => (t.said.includes('request released: its deletion goes on') ? true : undefined), {
      timeoutMs: 5_000,
      what: 'the watcher to say the release',
    });
    expect(t.said.filter((m) => /withdr[ae]w/.test(m))).toEqual([]);
    expect((await t.store.getIncident(incidentId!))?.state).toBe('completed');
  });

  it('withdrawn by its MHC (the Machine stands, healthy): the incident is withdrawn, the finalizer released, the request gone', async () => {
    const t = await setUp();
    await t.create();
    const { incidentId } = await t.followed();
    await t.held();
    await requestsIn(t.fake.kubeConfig(), 'default').remove(MACHINE);
    await t.gone();
    expect(await t.store.getIncident(incidentId!)).toMatchObject({ state: 'closed', lastDecision: { reason: 'REQUEST_WITHDRAWN' } });
    expect(t.said).toContain('request deleted');
  });

  it('collected with no outcome: released at holdAfterDeletionMs, and the log says the incident goes on', async () => {
    const t = await setUp({ holdAfterDeletionMs: 1_500 });
    await t.create();
    const { incidentId } = await t.followed();
    await t.held();
    t.machineGone();
    // The bound runs from the deletionTimestamp, which the API server writes in whole seconds.
    const marked = await waitFor(async () => metadataOf(t.request()!).deletionTimestamp as string | undefined, {
      timeoutMs: 5_000,
      what: 'the request marked',
    });
    await t.gone();
    expect(Date.now() - Date.parse(marked)).toBeGreaterThanOrEqual(1_500);
    expect(t.said).toContain('request held for its outcome past holdAfterDeletionMs without one: released; the incident goes on, read it with status');
    expect((await t.store.getIncident(incidentId!))?.state).toBe('open');
  });
});
