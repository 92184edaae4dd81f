// The kube fake answers a Cluster API object in whichever served version a request names, as
// Cluster API's conversion webhooks make it (capi-conversion.ts, after api/core/v1beta1/
// conversion.go): through client-node's CustomObjectsApi and a watch, unmodified.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { convertCapi, durationSeconds, goDuration } from '../../support/fakes/kube/capi-conversion.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import type { JsonObject } from '../../support/fakes/kube/patch.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';

const NS = 'capi';
const GROUP = 'cluster.x-k8s.io';
const MACHINES = resourceType(GROUP, 'machines')!;
const at = (version: string, plural: string) => ({ group: GROUP, version, namespace: NS, plural });

/** A v1beta1 Machine as Cluster API v1.10 wrote it: legacy conditions, the new ones under status.v1beta2. */
const machineV1beta1 = (): JsonObject => ({
  apiVersion: `${GROUP}/v1beta1`,
  kind: 'Machine',
  metadata: { name: 'wl-cp-1', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'wl' } },
  spec: {
    clusterName: 'wl',
    bootstrap: { configRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfig', name: 'wl-cp-1', namespace: NS, uid: 'kc-1' } },
    infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'DockerMachine', name: 'wl-cp-1', namespace: NS },
    nodeDrainTimeout: '1m30s',
  },
  status: {
    phase: 'Running',
    bootstrapReady: true,
    infrastructureReady: true,
    nodeRef: { apiVersion: 'v1', kind: 'Node', name: 'cp-1', uid: 'node-1' },
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-07T10:00:00Z' }],
    v1beta2: { conditions: [{ type: 'Available', status: 'True', reason: 'Available', lastTransitionTime: '2026-12-07T10:00:00Z' }] },
  },
});

let fake: KubeApiFake;
let custom: CustomObjectsApi;

beforeEach(async () => {
  fake = await startKubeApiFake();
  fake.addNamespace(NS);
  custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
});

afterEach(async () => {
  await fake.stop();
});

describe("Cluster API's conversion in the kube fake", () => {
  it('a Machine written as v1beta1 reads as v1beta2 in v1beta2 shape, and as v1beta1 exactly as written', async () => {
    fake.store.put(MACHINES, machineV1beta1());
    const v2 = (await custom.getNamespacedCustomObject({ ...at('v1beta2', 'machines'), name: 'wl-cp-1' })) as JsonObject;
    expect(v2).toMatchObject({
      apiVersion: `${GROUP}/v1beta2`,
      spec: {
        bootstrap: { configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name: 'wl-cp-1' } },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'DockerMachine', name: 'wl-cp-1' },
        deletion: { nodeDrainTimeoutSeconds: 90 },
      },
      status: {
        phase: 'Running',
        initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
        nodeRef: { name: 'cp-1' },
        conditions: [{ type: 'Available', status: 'True' }],
        deprecated: { v1beta1: { conditions: [{ type: 'Ready', status: 'True' }] } },
      },
    });
    const status = v2.status as JsonObject;
    expect(status.nodeRef).toEqual({ name: 'cp-1' });
    expect(status.v1beta2).toBeUndefined();
    expect((v2.spec as JsonObject).nodeDrainTimeout).toBeUndefined();

    const v1 = (await custom.getNamespacedCustomObject({ ...at('v1beta1', 'machines'), name: 'wl-cp-1' })) as JsonObject;
    const { metadata: _m, ...written } = machineV1beta1();
    const { metadata: _read, ...read } = v1;
    expect(read).toEqual(written);
  });

  it('a status patch in v1beta2 lands in the v1beta1 object as Cluster API stores it, and nothing else of it moves', async () => {
    fake.store.put(MACHINES, machineV1beta1());
    const v2 = (await custom.getNamespacedCustomObject({ ...at('v1beta2', 'machines'), name: 'wl-cp-1' })) as JsonObject;
    const conditions = [
      ...((v2.status as JsonObject).conditions as JsonObject[]),
      { type: 'ExternallyRemediated', status: 'False', reason: 'WaitingForRemediation', lastTransitionTime: '2026-12-07T10:05:00Z' },
    ];
    await custom.patchNamespacedCustomObjectStatus(
      { ...at('v1beta2', 'machines'), name: 'wl-cp-1', body: { status: { conditions } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const stored = fake.store.get(MACHINES, NS, 'wl-cp-1');
    expect(stored.apiVersion).toBe(`${GROUP}/v1beta1`);
    const status = stored.status as JsonObject;
    expect((status.v1beta2 as JsonObject).conditions).toEqual(conditions);
    expect(status.conditions).toEqual((machineV1beta1().status as JsonObject).conditions);
    // What v1beta2 cannot hold came through from the object as it was: the refs' version, namespace and uid.
    expect(status.nodeRef).toEqual({ apiVersion: 'v1', kind: 'Node', name: 'cp-1', uid: 'node-1' });
    expect((stored.spec as JsonObject).bootstrap).toEqual((machineV1beta1().spec as JsonObject).bootstrap);
  });

  it('a watch in v1beta2 sees v1beta1 objects in v1beta2 shape', async () => {
    const seen: JsonObject[] = [];
    const watch = await new Watch(fake.kubeConfig()).watch(
      `/apis/${GROUP}/v1beta2/namespaces/${NS}/machines`,
      {},
      (_type: string, object: JsonObject) => void seen.push(object),
      () => undefined,
    );
    try {
      fake.store.put(MACHINES, machineV1beta1());
      const object = await waitFor(async () => seen[0], { timeoutMs: 5_000, what: 'the ADDED event' });
      expect(object).toMatchObject({ apiVersion: `${GROUP}/v1beta2`, status: { nodeRef: { name: 'cp-1' }, conditions: [{ type: 'Available' }] } });
    } finally {
      watch.abort();
    }
  });

  it('a MachineHealthCheck: checks, triggerIf and templateRef in v1beta2, and back', () => {
    const v1: JsonObject = {
      apiVersion: `${GROUP}/v1beta1`,
      kind: 'MachineHealthCheck',
      metadata: { name: 'wl-control-plane', namespace: NS },
      spec: {
        clusterName: 'wl',
        selector: { matchLabels: { 'cluster.x-k8s.io/control-plane': '' } },
        unhealthyConditions: [{ type: 'Ready', status: 'Unknown', timeout: '5m0s' }],
        nodeStartupTimeout: '20m0s',
        maxUnhealthy: '40%',
        remediationTemplate: { apiVersion: 'etcd-remediator.io/v1alpha1', kind: 'EtcdRemediationRequestTemplate', name: 'etcd', namespace: NS },
      },
    };
    const v2 = convertCapi(v1, 'v1beta2');
    expect(v2.spec).toEqual({
      clusterName: 'wl',
      selector: { matchLabels: { 'cluster.x-k8s.io/control-plane': '' } },
      checks: { unhealthyNodeConditions: [{ type: 'Ready', status: 'Unknown', timeoutSeconds: 300 }], nodeStartupTimeoutSeconds: 1_200 },
      remediation: {
        triggerIf: { unhealthyLessThanOrEqualTo: '40%' },
        templateRef: { apiVersion: 'etcd-remediator.io/v1alpha1', kind: 'EtcdRemediationRequestTemplate', name: 'etcd' },
      },
    });
    expect(convertCapi(v2, 'v1beta1')).toEqual(v1);
  });

  it('a Cluster and a KubeadmControlPlane: refs, remediation and replica counts', () => {
    const cluster = convertCapi(
      {
        apiVersion: `${GROUP}/v1beta1`,
        kind: 'Cluster',
        metadata: { name: 'wl', namespace: NS },
        spec: {
          paused: true,
          controlPlaneRef: { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1', kind: 'KubeadmControlPlane', name: 'wl-cp', namespace: NS },
        },
        status: { controlPlaneReady: true, infrastructureReady: true },
      },
      'v1beta2',
    );
    expect(cluster).toMatchObject({
      spec: { paused: true, controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane', name: 'wl-cp' } },
      status: { initialization: { controlPlaneInitialized: true, infrastructureProvisioned: true } },
    });
    const kcp: JsonObject = {
      apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
      kind: 'KubeadmControlPlane',
      metadata: { name: 'wl-cp', namespace: NS },
      spec: { replicas: 3, remediationStrategy: { maxRetry: 2, retryPeriod: '5m0s' } },
      status: { replicas: 3, readyReplicas: 2, v1beta2: { readyReplicas: 3, conditions: [{ type: 'ScalingUp', status: 'False', reason: 'NotScalingUp' }] } },
    };
    const up = convertCapi(kcp, 'v1beta2');
    expect(up).toMatchObject({
      spec: { replicas: 3, remediation: { maxRetry: 2, retryPeriodSeconds: 300 } },
      status: { replicas: 3, readyReplicas: 3, conditions: [{ type: 'ScalingUp' }], deprecated: { v1beta1: { readyReplicas: 2 } } },
    });
    expect(convertCapi(up, 'v1beta1')).toEqual(kcp);
  });

  it.each([
    ['1m30s', 90],
    ['2h', 7_200],
    ['300ms', 0],
    ['1h0m5s', 3_605],
  ])("Go's duration %s is %i s, as ConvertToSeconds truncates", (text, seconds) => {
    expect(durationSeconds(text)).toBe(seconds);
  });

  it.each([
    [90, '1m30s'],
    [7_200, '2h0m0s'],
    [45, '45s'],
  ])('%i s is written %s, as Duration.String() writes it', (seconds, text) => {
    expect(goDuration(seconds)).toBe(text);
  });
});
