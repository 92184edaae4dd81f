// A request whose own incident ended as a duplicate of another (both resolved the same member at
// once, and the second to resolve it closed DUPLICATE_INCIDENT) goes on in the incident that holds
// the member: its status names that one and follows it to its end, never Completed before the
// Machine is replaced; deleting the request leaves that incident, another report's, alone. The
// runtime is a stand-in whose report opens an incident in a real store; the endings are written
// into the store as the steps write them.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../functions/core/common/decision.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { startRequestWatcher } from '../../../infra/kubernetes/request-watcher.ts';
import { startKubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { recordPhases, requestsIn, type StatusSeen } from './remediation-requests.ts';
import { namespacedClusterId, reportsToStore, tempStore } from './store-reports.ts';
import { tearDownAfterEach } from './teardown.ts';

const CLUSTER_ID = 'default/wl';
const MACHINE = 'wl-cp-1';

const teardown = tearDownAfterEach();

async function setUp() {
  const fake = await startKubeApiFake();
  teardown.push(() => fake.stop());
  // The request's Machine stands: deleting the request is its MachineHealthCheck's withdrawal, not a garbage collection.
  fake.addControlPlaneNode({ name: 'cp-1', internalIp: '10.0.0.11', machine: { name: MACHINE, namespace: 'default', clusterName: 'wl' } });
  const store = tempStore('watcher-holder-', teardown);
  const said: string[] = [];
  const record = (message: string) => void said.push(message);
  const watcher = startRequestWatcher({
    management: fake.kubeConfig(),
    runtime: reportsToStore(store).sink,
    clusterIdOf: namespacedClusterId,
    log: { debug: record, info: record, warn: record, error: record },
    followIntervalMs: 100,
    restartDelayMs: 20,
  });
  teardown.push(() => watcher.stop());
  await watcher.ready;
  const requests = requestsIn(fake.kubeConfig(), 'default');
  const { phases, stop } = recordPhases(fake.store, MACHINE);
  teardown.push(async () => stop());
  /** Ends an incident as a step does: its state, its decision and result. */
  const end = async (incident: Incident, state: 'closed' | 'awaiting-replacement', decision: Decision): Promise<void> => {
    const now = (await store.getIncident(incident.incidentId))!;
    await store.updateIncident(incident.incidentId, { state, lastDecision: decision, result: decision }, { expectVersion: now.version, now: Date.now() });
  };
  return {
    store,
    said,
    phases,
    end,
    create: () => requests.create(MACHINE, 'wl'),
    remove: () => requests.remove(MACHINE),
    statusWith: (wanted: (s: StatusSeen) => boolean, what: string) => requests.statusWith(MACHINE, wanted, what, { intervalMs: 25 }),
  };
}

describe('a request whose incident ended as a duplicate of another', () => {
  it('follows the incident that holds its member, named, to its end: Running while that one runs, Completed only once it replaced the Machine', async () => {
    const t = await setUp();
    // Another report of the member, by its Node: that incident holds it.
    const { incident: holder } = await t.store.openOrJoin({
      clusterId: CLUSTER_ID,
      targetKey: 'nodeName=cp-1',
      target: { nodeName: 'cp-1' },
      reason: 'Node NotReady',
      now: Date.now(),
    });
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
    await t.end(holder, 'awaiting-replacement', approved);
    const done = await t.statusWith((s) => s.phase === 'AwaitingReplacement', 'the request to await the replacement with the incident it follows');
    expect(done.incidentId).toBe(holder.incidentId);
    expect(done.message).toContain('waiting for the replacement Machine to join etcd');
    // Awaiting its replacement once, at the end (nothing here joins one); never Recovered.
    expect(t.phases.filter((p) => p === 'AwaitingReplacement' || p === 'Completed' || p === 'Recovered')).toEqual(['AwaitingReplacement']);
    expect(t.phases.at(-1)).toBe('AwaitingReplacement');
  });

  it('deleting the request leaves the incident it follows alone: that one is another report’s', async () => {
    const t = await setUp();
    const { incident: holder } = await t.store.openOrJoin({
      clusterId: CLUSTER_ID,
      targetKey: 'nodeName=cp-1',
      target: { nodeName: 'cp-1' },
      reason: 'Node NotReady',
      now: Date.now(),
    });
    await t.create();
    const own = await t.statusWith((s) => s.incidentId !== undefined && s.incidentId !== holder.incidentId, 'the request to follow its own incident');
    await t.end((await t.store.getIncident(own.incidentId!))!, 'closed', {
      kind: 'close',
      reason: 'DUPLICATE_INCIDENT',
      message: 'duplicate',
      evidence: { incidentId: holder.incidentId },
    });
    await t.statusWith((s) => s.incidentId === holder.incidentId, 'the request to follow the incident that holds its member');

    await t.remove();
    await waitFor(async () => (t.said.some((m) => m.startsWith('request deleted')) ? true : undefined), {
      timeoutMs: 10_000,
      what: 'the watcher to see the request deleted',
    });
    expect(t.said.filter((m) => m.startsWith('request deleted'))).toEqual(["request deleted; the incident it followed is another report's, and goes on"]);
    const after = await t.store.getIncident(holder.incidentId);
    expect(after).toMatchObject({ state: 'open' });
    expect(after?.lastDecision).toBeUndefined();
  });
});
