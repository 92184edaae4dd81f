// Scenario 4, the MachineHealthCheck flow: a request appears (as MHC creates it: named after the
// Machine, labelled with its Cluster), the incident runs on real etcd behind the FAKE API server,
// and the request's status ends with the outcome; a request deleted early withdraws its incident.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startRequestWatcher, type RequestWatcher } from '../../../infra/kubernetes/request-watcher.ts';
import { startPipeline, type Pipeline } from '../e2e/pipeline.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, type KubeWorld } from './kube-world.ts';
import { MHC_REASON, recordPhases, requestsIn } from './remediation-requests.ts';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const current: { world?: KubeWorld; pipeline?: Pipeline; watchers: RequestWatcher[] } = { watchers: [] };
afterEach(async () => {
  const { world, pipeline, watchers } = current;
  current.watchers = [];
  delete current.world;
  delete current.pipeline;
  try {
    for (const watcher of watchers) await watcher.stop();
    await pipeline?.close();
  } finally {
    await world?.down();
  }
});

interface RequestShape {
  metadata: { name: string };
  status?: { phase?: string; reasonCode?: string; message?: string; incidentId?: string; leaderMove?: string; startedAt?: string; completedAt?: string };
}

async function setUp(policy: Record<string, unknown>) {
  const world = (current.world = await startKubeWorld());
  const pipeline = (current.pipeline = await startPipeline(world.lab, { kube: world.access, endpoints: [], policy, clusterId: CAPI_CLUSTER }));
  const objects = world.fake.kubeConfig().makeApiClient(CustomObjectsApi);
  const coordinates = { group: REQUEST_GROUP, version: REQUEST_VERSION, namespace: CAPI_NAMESPACE, plural: REQUEST_PLURAL };
  const requests = requestsIn(world.fake.kubeConfig(), CAPI_NAMESPACE);
  /** `events: false` follows the incident in the store alone, as a watcher reporting to a remote bus does. */
  const watch = async ({ events = true, recheckRecoveredMs }: { events?: boolean; recheckRecoveredMs?: number } = {}): Promise<RequestWatcher> => {
    const runtime = pipeline.runtime;
    const watcher = startRequestWatcher({
      management: world.fake.kubeConfig(),
      runtime: {
        ...runtime,
        clock: systemClock,
        submit: (detail, source) => runtime.submit(detail, source),
        ...(events ? { subscribe: (observer: Parameters<typeof runtime.bus.subscribe>[0]) => runtime.bus.subscribe(observer) } : {}),
      },
      followIntervalMs: 200,
      clusterIdOf: (request) => request.clusterName ?? '',
      log: silent,
      restartDelayMs: 50,
      ...(recheckRecoveredMs === undefined ? {} : { recheckRecoveredMs }),
    });
    current.watchers.push(watcher);
    await watcher.ready;
    return watcher;
  };
  return {
    world,
    pipeline,
    watch,
    create: (machine: string) => requests.create(machine, CAPI_CLUSTER, { reason: MHC_REASON }),
    remove: (machine: string) => requests.remove(machine),
    read: async (machine: string) => (await objects.getNamespacedCustomObject({ ...coordinates, name: machine })) as RequestShape,
  };
}

describe.sequential('MachineHealthCheck external remediation through the watcher', () => {
  it('4. a request for the kubelet-down leader runs its incident and ends with the outcome in its status', async () => {
    const t = await setUp({ pathOrder: ['port-forward', 'exec-relay'] });
    const leader = await t.world.lab.leader();
    t.world.fake.kubeletDown(leader.name);
    await t.watch();

    await t.create(t.world.machineOf(leader));

    const done = await waitFor(
      async () => {
        const request = await t.read(t.world.machineOf(leader));
        return request.status?.phase === 'AwaitingReplacement' ? request : undefined;
      },
      { timeoutMs: 45_000, what: 'the request to complete' },
    );
    // The reason is the last approval's: once leadership moved, a retried removal finds a follower.
    const approvals = t.pipeline.events.filter((e) => e.detailType === 'RemediationApproved').map((e) => (e.detail as { reason: string }).reason);
    expect(approvals[0]).toBe('LEADER_MOVED');
    expect(done.status).toMatchObject({ reasonCode: approvals.at(-1), leaderMove: 'moved' });
    expect(done.status?.incidentId).toMatch(/\S/);
    expect(done.status?.startedAt).toBeDefined();
    expect(done.status?.completedAt).toBeDefined();
    expect(t.pipeline.calls.removed).toEqual([leader.id]);
    expect((await t.world.readMachine(t.world.machineOf(leader)))?.deleting).toBe(true);
    expect(t.world.fake.requestCount('DELETE', `/machines/${t.world.machineOf(leader)}`)).toBe(1);
    const incident = await t.pipeline.runtime.store.getIncident(done.status!.incidentId!);
    expect(incident).toMatchObject({ state: 'awaiting-replacement', target: { machineName: t.world.machineOf(leader) } });

    // A watcher started again (a restart) finds the request done: nothing is reported twice.
    await t.watch();
    expect(await t.pipeline.runtime.store.listIncidents({ clusterId: CAPI_CLUSTER })).toHaveLength(1);
  });

  it('4b. a request deleted while its incident waits out the grace window withdraws it: nothing is removed', async () => {
    // The relay is off and the grace window long: the incident waits on the kubelet-down leader.
    const t = await setUp({ pathOrder: ['port-forward'], graceMs: 600_000 });
    const leader = await t.world.lab.leader();
    t.world.fake.kubeletDown(leader.name);
    await t.watch({ events: false });
    const outcome = t.pipeline.runtime.waitForOutcome({ clusterId: CAPI_CLUSTER }, 45_000);

    await t.create(t.world.machineOf(leader));
    const waiting = await waitFor(
      async () => {
        const request = await t.read(t.world.machineOf(leader));
        return request.status?.phase === 'Waiting' && request.status.reasonCode === 'LEADER_UNREACHABLE' ? request : undefined;
      },
      { timeoutMs: 30_000, what: 'the incident to wait out the grace window' },
    );
    expect(waiting.status?.message).toContain('kubelet');
    await t.remove(t.world.machineOf(leader));

    const ended = await outcome;
    expect(ended.detailType).toBe('RemediationClosed');
    expect(ended.detail).toMatchObject({ reason: 'REQUEST_WITHDRAWN', incidentId: waiting.status?.incidentId });
    expect((ended.detail as { message: string }).message).toContain(`EtcdRemediationRequest ${CAPI_NAMESPACE}/${t.world.machineOf(leader)} was deleted`);
    expect(t.pipeline.calls.memberRemove).toEqual([]);
    expect(t.world.fake.requestCount('DELETE', `/machines/${t.world.machineOf(leader)}`)).toBe(0);
    expect((await t.world.lab.memberList()).map((m) => m.id)).toContain(leader.id);
  });

  it('4c. the leader heals inside the grace window: Recovered; the request still there later (MHC still finds the Machine unhealthy) is reported again and completed', async () => {
    const t = await setUp({ pathOrder: ['port-forward'], graceMs: 600_000 });
    const leader = await t.world.lab.leader();
    const machine = t.world.machineOf(leader);
    t.world.fake.kubeletDown(leader.name);
    await t.watch({ recheckRecoveredMs: 1_000 });
    const { phases, stop: unsubscribe } = recordPhases(t.world.fake.store, machine);

    await t.create(machine);
    await waitFor(async () => ((await t.read(machine)).status?.reasonCode === 'LEADER_UNREACHABLE' ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the incident to wait out the grace window',
    });
    t.world.fake.heal(leader.name);

    const done = await waitFor(
      async () => {
        const request = await t.read(machine);
        return request.status?.phase === 'AwaitingReplacement' ? request : undefined;
      },
      { timeoutMs: 45_000, what: 'the request to complete after it was reported again' },
    );
    unsubscribe();

    expect(phases).toContain('Recovered');
    expect(phases.indexOf('Recovered')).toBeLessThan(phases.lastIndexOf('AwaitingReplacement'));
    const incidents = await t.pipeline.runtime.store.listIncidents({ clusterId: CAPI_CLUSTER });
    expect(incidents.map((i) => [i.state, i.lastDecision?.reason ?? ''])).toEqual([
      ['closed', 'TARGET_RECOVERED'],
      ['awaiting-replacement', expect.any(String)],
    ]);
    expect(done.status?.incidentId).toBe(incidents[1]!.incidentId);
    expect(done.status?.leaderMove).toBe('moved');
    expect(t.pipeline.calls.removed).toEqual([leader.id]);
    expect(t.world.fake.requestCount('DELETE', `/machines/${machine}`)).toBe(1);
  });
});
