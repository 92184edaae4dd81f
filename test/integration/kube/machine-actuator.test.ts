// The CAPI Machine reader and actuator, through client-node for real, against the kube API fake.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CustomObjectsApi } from '@kubernetes/client-node';
import {
  createMachineActuator,
  machineActuatorFor,
  REMEDIATED_ANNOTATION,
  type RemediationRecord,
} from '../../../functions/adapters/kube/cluster-api/machine-actuator.ts';
import { createMachineReader } from '../../../functions/adapters/kube/cluster-api/machines.ts';
import type { ReplaceRequest } from '../../../functions/ports/actuator.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { text } from '../../support/fakes/kube/patch.ts';
import { metadataOf, resourceType } from '../../support/fakes/kube/store.ts';

const NS = 'capi';
const CLUSTER = 'wl';
const MACHINES = resourceType('cluster.x-k8s.io', 'machines')!;
const AT = new Date('2026-11-30T12:00:00.000Z');

let fake: KubeApiFake;
let custom: CustomObjectsApi;
/** Each DELETE the fake took, with the Machine's annotation as it stood at that moment. */
let deletes: { name: string; annotation: string | undefined }[];

function annotationOf(name: string): string | undefined {
  const machine = fake.store.find(MACHINES, NS, name);
  const annotations = machine ? metadataOf(machine).annotations : undefined;
  const value = typeof annotations === 'object' && annotations !== null && !Array.isArray(annotations) ? annotations[REMEDIATED_ANNOTATION] : undefined;
  return typeof value === 'string' ? value : undefined;
}

beforeEach(async () => {
  // Long enough that a deleted Machine stays "deleting" for the whole test.
  fake = await startKubeApiFake({ machineDeletionMs: 60_000 });
  for (const i of [1, 2, 3]) {
    fake.addControlPlaneNode({ name: `cp-${i}`, internalIp: `10.0.0.${10 + i}`, machine: { name: `wl-cp-${i}`, namespace: NS, clusterName: CLUSTER } });
  }
  // Another cluster's Machine on a node of the same name: the cluster label must keep it out.
  fake.store.put(MACHINES, {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    metadata: { name: 'other-cp-1', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'other' } },
    status: { nodeRef: { name: 'cp-9' } },
  });
  // A worker of the same cluster: its Machine carries the cluster's name, not the control-plane label.
  fake.store.put(MACHINES, {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    metadata: { name: 'wl-md-0-1', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER, 'cluster.x-k8s.io/deployment-name': 'wl-md-0' } },
    status: { nodeRef: { name: 'worker-1' } },
  });
  deletes = [];
  const schedule = fake.scheduleMachineDeletion.bind(fake);
  // The fake's DELETE handler goes through this hook: record what the Machine looked like then.
  vi.spyOn(fake, 'scheduleMachineDeletion').mockImplementation((namespace, name, afterMs) => {
    deletes.push({ name, annotation: annotationOf(name) });
    schedule(namespace, name, afterMs);
  });
  custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await fake.stop();
});

const request = (target: Record<string, string>, overrides: Partial<ReplaceRequest> = {}): ReplaceRequest => ({
  clusterId: CLUSTER,
  incidentId: 'inc-1',
  member: { id: '8e9e05c52164694d', name: 'cp-2' },
  target,
  ...overrides,
});

const actuator = () => createMachineActuator({ customObjects: custom, namespace: NS, clusterName: CLUSTER, now: () => AT });

describe('machine reader', () => {
  it('resolves a Machine by name and by its node', async () => {
    const reader = createMachineReader({ customObjects: custom, clusterName: CLUSTER });
    const byName = await reader.machineByName(NS, 'wl-cp-2');
    expect(byName).toEqual({ name: 'wl-cp-2', namespace: NS, nodeName: 'cp-2', deleting: false, uid: expect.any(String), controlPlane: true });
    expect(byName!.uid).not.toBe('');
    expect(await reader.machineOfNode(NS, 'cp-3')).toMatchObject({ name: 'wl-cp-3', nodeName: 'cp-3' });
  });

  it('answers undefined for a missing Machine, a node without one, and another cluster', async () => {
    const reader = createMachineReader({ customObjects: custom, clusterName: CLUSTER });
    expect(await reader.machineByName(NS, 'nope')).toBeUndefined();
    expect(await reader.machineOfNode(NS, 'cp-7')).toBeUndefined();
    expect(await reader.machineOfNode(NS, 'cp-9')).toBeUndefined();
    expect(await reader.machineOfNode('elsewhere', 'cp-1')).toBeUndefined();
  });

  it('lists the control-plane Machines only, and the API server does the selecting', async () => {
    const reader = createMachineReader({ customObjects: custom, clusterName: CLUSTER });
    const list = vi.spyOn(custom, 'listNamespacedCustomObject');
    const listed = await reader.listControlPlaneMachines(NS);
    expect(listed.map((m) => m.name).sort()).toEqual(['wl-cp-1', 'wl-cp-2', 'wl-cp-3']);
    expect(listed.every((m) => m.controlPlane)).toBe(true);
    expect(await reader.machineOfNode(NS, 'worker-1')).toBeUndefined();
    expect(list.mock.calls.map(([params]) => params.labelSelector)).toEqual([
      'cluster.x-k8s.io/cluster-name=wl,cluster.x-k8s.io/control-plane',
      'cluster.x-k8s.io/cluster-name=wl,cluster.x-k8s.io/control-plane',
    ]);
    // By name the worker is read, and said to be no control-plane Machine.
    expect(await reader.machineByName(NS, 'wl-md-0-1')).toMatchObject({ name: 'wl-md-0-1', controlPlane: false });
  });

  it('reads the v1beta2 shape (status.nodeRef.name only)', async () => {
    fake.store.put(MACHINES, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: {
        name: 'wl-cp-4',
        namespace: NS,
        labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER, 'cluster.x-k8s.io/control-plane': '' },
        deletionTimestamp: AT.toISOString(),
      },
      status: { nodeRef: { name: 'cp-4' }, phase: 'Deleting' },
    });
    const reader = createMachineReader({ customObjects: custom, clusterName: CLUSTER, version: 'v1beta2' });
    expect(await reader.machineOfNode(NS, 'cp-4')).toMatchObject({ name: 'wl-cp-4', nodeName: 'cp-4', deleting: true });
  });
});

describe('machine actuator', () => {
  it('annotates the Machine with the remediation record, then deletes it', async () => {
    const result = await actuator().replace(request({ machineName: 'wl-cp-2' }));
    expect(result.action).toBe('deleted');
    expect(result.detail).toBe(`Machine wl-cp-2 in namespace ${NS} annotated ${REMEDIATED_ANNOTATION} (incident inc-1) and deleted`);
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.name).toBe('wl-cp-2');
    // The annotation was already on the Machine when the DELETE arrived.
    const record = JSON.parse(deletes[0]!.annotation ?? 'null') as RemediationRecord;
    expect(record).toEqual({ incidentId: 'inc-1', at: AT.toISOString(), reason: 'etcd member cp-2 was removed by incident inc-1', member: 'cp-2' });
    expect(metadataOf(fake.store.get(MACHINES, NS, 'wl-cp-2')).deletionTimestamp).toBeDefined();
  });

  it('with no version named, reads and writes in the one discovery prefers (v1beta2), asking discovery once per management cluster', async () => {
    const management = { kubeconfig: fake.kubeconfigYaml(), namespace: NS, clusterName: CLUSTER };
    const result = await machineActuatorFor(management).replace(request({ machineName: 'wl-cp-2' }));
    expect(result.detail).toBe(`Machine wl-cp-2 in namespace ${NS} annotated ${REMEDIATED_ANNOTATION} (incident inc-1) and deleted`);
    await machineActuatorFor(management).replace(request({ machineName: 'wl-cp-3', incidentId: 'inc-2' }));
    const machineCalls = fake.requests.filter((r) => r.path.includes('/machines'));
    expect(machineCalls.length).toBeGreaterThan(0);
    expect(machineCalls.every((r) => r.path.startsWith('/apis/cluster.x-k8s.io/v1beta2/'))).toBe(true);
    expect(fake.requests.filter((r) => r.path === '/apis')).toHaveLength(1);
    // The Machine was written as v1beta1: the v1beta2 condition is where Cluster API keeps it then.
    const status = fake.store.get(MACHINES, NS, 'wl-cp-2').status as { v1beta2?: { conditions?: { type: string; status: string }[] } };
    expect(status.v1beta2?.conditions?.find((c) => c.type === 'ExternallyRemediated')).toMatchObject({ status: 'True' });
  });

  it('a discovery that fails fails the step, naming the read, and is asked again on the next one', async () => {
    const refused = fake.failNext({ method: 'GET', path: /^\/apis$/, status: 503 });
    // Its own kubeconfig text: no other case's discovery is remembered for it.
    const management = { kubeconfig: `${fake.kubeconfigYaml()}\n# discovery refused once\n`, namespace: NS, clusterName: CLUSTER };
    const actuator = machineActuatorFor(management);
    await expect(actuator.replace(request({ machineName: 'wl-cp-2' }))).rejects.toThrow(/^reading Machine wl-cp-2 in namespace capi failed: .*503/);
    expect(refused.fired).toBe(1);
    expect(deletes).toEqual([]);
    const result = await actuator.replace(request({ machineName: 'wl-cp-2' }));
    expect(result.detail).toBe(`Machine wl-cp-2 in namespace ${NS} annotated ${REMEDIATED_ANNOTATION} (incident inc-1) and deleted`);
    expect(fake.requests.filter((r) => r.path === '/apis')).toHaveLength(2);
  });

  it('says ExternallyRemediated True on the Machine before deleting it; a write that lost a race (409) is made again', async () => {
    const conflict = fake.failNext({ method: 'PATCH', path: new RegExp(`/namespaces/${NS}/machines/wl-cp-2/status$`), status: 409 });
    const result = await actuator().replace(request({ machineName: 'wl-cp-2' }));
    expect(result.detail).toBe(`Machine wl-cp-2 in namespace ${NS} annotated ${REMEDIATED_ANNOTATION} (incident inc-1) and deleted`);
    expect(conflict.fired).toBe(1);
    const status = fake.store.get(MACHINES, NS, 'wl-cp-2').status as { v1beta2?: { conditions?: { type: string; status: string; reason: string }[] } };
    expect(status.v1beta2?.conditions?.find((c) => c.type === 'ExternallyRemediated')).toMatchObject({ status: 'True', reason: 'EtcdMemberRemoved' });
  });

  it('a condition the API server will not take does not keep the Machine: deleted all the same, the failure said in the result', async () => {
    fake.failNext({ method: 'PATCH', path: new RegExp(`/namespaces/${NS}/machines/wl-cp-2/status$`), status: 500, times: 3 });
    const result = await actuator().replace(request({ machineName: 'wl-cp-2' }));
    expect(result.detail).toMatch(
      new RegExp(
        `and deleted; its ExternallyRemediated condition was not written \\(writing the ExternallyRemediated condition of Machine wl-cp-2 in namespace ${NS} failed: HTTP 500`,
      ),
    );
    expect(deletes.map((d) => d.name)).toEqual(['wl-cp-2']);
  });

  it('finds the Machine by nodeName, or by the member name kubeadm gave after the node', async () => {
    await actuator().replace(request({ nodeName: 'cp-3' }));
    await actuator().replace(request({ memberName: 'cp-2' }));
    expect(deletes.map((d) => d.name)).toEqual(['wl-cp-3', 'wl-cp-2']);
  });

  it('deletes once when called twice with one incidentId', async () => {
    const first = await actuator().replace(request({ machineName: 'wl-cp-1' }));
    const second = await actuator().replace(request({ machineName: 'wl-cp-1' }));
    expect([first.action, second.action]).toEqual(['deleted', 'deleted']);
    expect(second.detail).toBe(`Machine wl-cp-1 in namespace ${NS} is already being deleted`);
    expect(deletes).toHaveLength(1);
  });

  it('counts a Machine CAPI is already deleting as done, without touching it', async () => {
    fake.store.put(MACHINES, {
      ...fake.store.get(MACHINES, NS, 'wl-cp-3'),
      metadata: { ...metadataOf(fake.store.get(MACHINES, NS, 'wl-cp-3')), deletionTimestamp: AT.toISOString() },
    });
    const result = await actuator().replace(request({ nodeName: 'cp-3' }));
    expect(result.detail).toBe(`Machine wl-cp-3 in namespace ${NS} is already being deleted`);
    expect(deletes).toEqual([]);
    expect(annotationOf('wl-cp-3')).toBeUndefined();
  });

  it('never deletes a worker Machine named by mistake, and says why', async () => {
    await expect(actuator().replace(request({ machineName: 'wl-md-0-1' }))).rejects.toThrow(
      `Machine wl-md-0-1 in namespace ${NS} is not a control-plane Machine (it has no cluster.x-k8s.io/control-plane label), so it runs no etcd member of cluster ${CLUSTER}; it is not deleted`,
    );
    expect(deletes).toEqual([]);
    expect(annotationOf('wl-md-0-1')).toBeUndefined();
  });

  it('counts a missing Machine as done', async () => {
    expect(await actuator().replace(request({ machineName: 'gone' }))).toEqual({
      action: 'deleted',
      detail: `Machine gone in namespace ${NS} is already gone`,
    });
    expect(await actuator().replace(request({ nodeName: 'cp-8' }))).toEqual({
      action: 'deleted',
      detail: `the control-plane Machine of node cp-8 (cluster ${CLUSTER}, namespace ${NS}) is already gone`,
    });
    expect(deletes).toEqual([]);
  });

  it('counts a Machine that goes between the steps as done', async () => {
    const get = custom.getNamespacedCustomObject.bind(custom);
    vi.spyOn(custom, 'getNamespacedCustomObject').mockImplementationOnce(async (...args) => {
      const found: unknown = await get(...args);
      fake.store.remove(MACHINES, NS, 'wl-cp-1'); // gone after the read, before the patch
      return found;
    });
    expect((await actuator().replace(request({ machineName: 'wl-cp-1' }))).detail).toBe(`Machine wl-cp-1 in namespace ${NS} went before it was annotated`);
    const patch = custom.patchNamespacedCustomObject.bind(custom);
    vi.spyOn(custom, 'patchNamespacedCustomObject').mockImplementationOnce(async (...args) => {
      const patched: unknown = await patch(...args);
      fake.store.remove(MACHINES, NS, 'wl-cp-2'); // gone after the patch, before the delete
      return patched;
    });
    expect((await actuator().replace(request({ machineName: 'wl-cp-2' }))).detail).toBe(
      `Machine wl-cp-2 in namespace ${NS} was annotated ${REMEDIATED_ANNOTATION} and went before it was deleted`,
    );
    // The one DELETE that was sent found nothing (404), which counted as done.
    expect(fake.requestCount('DELETE', `/namespaces/${NS}/machines/wl-cp-2`)).toBe(1);
    expect(deletes).toEqual([]);
  });

  it('never deletes a replacement given the same name: the DELETE carries the uid it read, and the API server refuses it', async () => {
    const original = fake.store.get(MACHINES, NS, 'wl-cp-2');
    const patch = custom.patchNamespacedCustomObject.bind(custom);
    vi.spyOn(custom, 'patchNamespacedCustomObject').mockImplementationOnce(async (...args) => {
      const patched: unknown = await patch(...args);
      // Replaced after the patch, before the delete: a new Machine, a new uid, the same name.
      fake.store.remove(MACHINES, NS, 'wl-cp-2');
      const { uid: _uid, resourceVersion: _rv, annotations: _annotations, ...metadata } = metadataOf(original);
      fake.store.put(MACHINES, { ...original, metadata });
      return patched;
    });
    const outcome = await actuator()
      .replace(request({ machineName: 'wl-cp-2' }))
      .then(
        (result) => result.detail,
        (error: unknown) => String(error),
      );
    const replacement = metadataOf(fake.store.get(MACHINES, NS, 'wl-cp-2'));
    expect(replacement.uid).not.toBe(metadataOf(original).uid);
    expect(replacement.deletionTimestamp).toBeUndefined();
    expect(deletes).toEqual([]);
    expect(outcome).toBe(`Machine wl-cp-2 in namespace ${NS} was annotated ${REMEDIATED_ANNOTATION} and went before it was deleted`);
  });

  /** The Machine goes and a new one takes its name: a new uid, no annotation, not deleting. */
  function replaceWithSameName(name: string): { oldUid: string; newUid: string } {
    const original = fake.store.get(MACHINES, NS, name);
    fake.store.remove(MACHINES, NS, name);
    const { uid: _uid, resourceVersion: _rv, annotations: _annotations, ...metadata } = metadataOf(original);
    fake.store.put(MACHINES, { ...original, metadata });
    return { oldUid: text(metadataOf(original).uid), newUid: text(metadataOf(fake.store.get(MACHINES, NS, name)).uid) };
  }

  it('called again after the Machine it saw was replaced by one of the same name, leaves the replacement alone', async () => {
    const seen = { name: 'wl-cp-2', uid: text(metadataOf(fake.store.get(MACHINES, NS, 'wl-cp-2')).uid) };
    // The first call's delete went through, its journal line did not: the step runs again later.
    const { newUid } = replaceWithSameName('wl-cp-2');
    const result = await actuator().replace(request({ machineName: 'wl-cp-2' }, { machine: seen }));
    expect(result.detail).toBe(
      `Machine wl-cp-2 in namespace ${NS} is uid ${newUid}, not wl-cp-2 uid ${seen.uid} that the incident saw: that Machine is already gone, and this one is left alone`,
    );
    expect(deletes).toEqual([]);
    expect(annotationOf('wl-cp-2')).toBeUndefined();
    expect(metadataOf(fake.store.get(MACHINES, NS, 'wl-cp-2')).deletionTimestamp).toBeUndefined();
  });

  it('never annotates a replacement that took the name between the read and the patch: the patch carries the uid read', async () => {
    const read = custom.getNamespacedCustomObject.bind(custom);
    vi.spyOn(custom, 'getNamespacedCustomObject').mockImplementationOnce(async (...args) => {
      const machine: unknown = await read(...args);
      replaceWithSameName('wl-cp-2');
      return machine;
    });
    const result = await actuator().replace(request({ machineName: 'wl-cp-2' }));
    expect(result.detail).toBe(`Machine wl-cp-2 in namespace ${NS} went before it was annotated`);
    expect(annotationOf('wl-cp-2')).toBeUndefined();
    expect(deletes).toEqual([]);
  });

  it('with the uid it saw still in place, replaces the Machine as before', async () => {
    const seen = { name: 'wl-cp-2', uid: text(metadataOf(fake.store.get(MACHINES, NS, 'wl-cp-2')).uid) };
    const result = await actuator().replace(request({ machineName: 'wl-cp-2' }, { machine: seen }));
    expect(result.detail).toContain('and deleted');
    expect(deletes.map((d) => d.name)).toEqual(['wl-cp-2']);
  });

  it('hands the signal to client-node, so an aborted request fails with the reason', async () => {
    const reader = createMachineReader({ customObjects: custom, clusterName: CLUSTER });
    const signal = AbortSignal.abort(new Error('actuator timeout'));
    await expect(reader.machineByName(NS, 'wl-cp-2', { signal })).rejects.toThrow(`reading Machine wl-cp-2 in namespace ${NS} failed: actuator timeout`);
  });

  it('does nothing once the signal has aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('actuator timeout'));
    await expect(actuator().replace(request({ machineName: 'wl-cp-2' }, { signal: controller.signal }))).rejects.toThrow('actuator timeout');
    expect(deletes).toEqual([]);
    expect(annotationOf('wl-cp-2')).toBeUndefined();
  });

  it('names the Machine, the namespace and the failed step when the API server is unreachable', async () => {
    await fake.stop();
    const error = await actuator()
      .replace(request({ machineName: 'wl-cp-2' }))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(String(error)).toMatch(
      new RegExp(`^MachineReadError: reading Machine wl-cp-2 in namespace ${NS} failed: fetch failed \\(connect ECONNREFUSED .+\\)$`),
    );
    fake = await startKubeApiFake(); // afterEach stops it
  });
});
