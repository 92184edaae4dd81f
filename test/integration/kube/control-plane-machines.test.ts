// Only the cluster's control-plane Machines are read: a real cluster has hundreds of worker
// Machines, and none of them runs an etcd member. Real etcd behind the FAKE API server, with 1,000
// worker Machines beside the three control-plane ones; the whole pipeline runs twice (a request
// for a worker Machine, then a follower's remediation) and nothing it writes names a worker.
import { beforeAll, describe, expect, it } from 'vitest';
import { incidentIdOf } from '../../../events/catalogue.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { startPipeline, type Pipeline } from '../e2e/pipeline.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld } from './kube-world.ts';
import { kubeWorldPerDescribe } from './world-per-describe.ts';

const MACHINES = resourceType('cluster.x-k8s.io', 'machines')!;
const WORKERS = 1_000;
const workerName = (i: number): string => `wl-md-0-${String(i).padStart(4, '0')}`;
const WORKER_NAME = /wl-md-0-\d{4}/g;
/** A MachineHealthCheck pointed at the workers by mistake asks for this one. */
const ASKED_WORKER = workerName(417);

const current = kubeWorldPerDescribe<Pipeline>(() => startKubeWorld());

beforeAll(async () => {
  const world = current.world!;
  // As a MachineDeployment's Machines are labelled: the cluster's name, no control-plane label.
  for (let i = 0; i < WORKERS; i++) {
    world.fake.store.put(MACHINES, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: {
        name: workerName(i),
        namespace: CAPI_NAMESPACE,
        labels: { 'cluster.x-k8s.io/cluster-name': CAPI_CLUSTER, 'cluster.x-k8s.io/deployment-name': 'wl-md-0' },
      },
      spec: { clusterName: CAPI_CLUSTER, bootstrap: { dataSecretName: `${workerName(i)}-bootstrap` } },
      status: { nodeRef: { apiVersion: 'v1', kind: 'Node', name: `worker-${i}` }, phase: 'Running' },
    });
  }
  current.pipeline = await startPipeline(world.lab, { kube: world.access, endpoints: [], policy: { pathOrder: ['port-forward', 'exec-relay'] } });
}, 60_000);

const workersIn = (value: unknown): string[] => [...new Set(JSON.stringify(value).match(WORKER_NAME) ?? [])];

describe.sequential('1,000 worker Machines beside the control plane', () => {
  it('a request for a worker Machine is refused, saying it is no control-plane Machine, and the worker is left alone', async () => {
    const { world, pipeline } = current as Required<typeof current>;

    const outcome = await pipeline.remediate({ machineName: ASKED_WORKER });

    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationBlocked');
    const detail = outcome.detail as { reason: string; message: string };
    expect(detail.reason).toBe('NOT_CONTROL_PLANE');
    expect(detail.message).toContain(`Machine ${ASKED_WORKER} is not one of cluster ${CAPI_CLUSTER}'s control-plane Machines`);
    expect(detail.message).toContain('cluster.x-k8s.io/control-plane');
    expect(world.fake.requestCount('DELETE', `/machines/${ASKED_WORKER}`)).toBe(0);
    expect(await world.readMachine(ASKED_WORKER)).toEqual({ annotations: {}, deleting: false });
    expect(pipeline.calls.memberRemove).toEqual([]);
  });

  it('a follower is remediated, and no view, event or incident item names a worker', async () => {
    const { world, pipeline } = current as Required<typeof current>;
    const leader = await world.lab.leader();
    const follower = world.lab.members.find((m) => m.id !== leader.id)!;

    const outcome = await pipeline.remediate({ machineName: world.machineOf(follower) });

    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationCompleted');
    expect(pipeline.calls.removed).toEqual([follower.id]);
    const incidents: Incident[] = await pipeline.runtime.store.listIncidents({ clusterId: 'lab' });
    expect(incidents).toHaveLength(2);
    for (const incident of incidents) {
      expect(incident.views.length).toBeGreaterThan(0);
      // Every view lists the three control-plane Machines, and those only.
      for (const view of incident.views) expect(view.machines?.map((m) => m.name).sort()).toEqual(world.lab.members.map((m) => world.machineOf(m)).sort());
      expect(workersIn(incident.views)).toEqual([]);
      const asked = incident.target.machineName === ASKED_WORKER ? [ASKED_WORKER] : [];
      // The item, its journal and its events name no worker but the one a request asked for.
      expect(workersIn(incident)).toEqual(asked);
      expect(workersIn(await pipeline.runtime.store.journal(incident.incidentId))).toEqual(asked);
      expect(workersIn(pipeline.events.filter((e) => incidentIdOf(e) === incident.incidentId))).toEqual(asked);
    }
  });
});
