// client-node, unmodified, against the protocol-level kube fake, with real etcd behind port-forward:
// REST through client-node's APIs, port-forward through the adapter's pod streams (client-node's
// PortForward underneath), and what the fake answers before an upgrade read raw.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { gatewayStatus } from '../../../infra/lab/etcd-gateway.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { createPodStreams } from '../../../functions/adapters/kube/streams/pod-streams-client.ts';
import type { PodRef, PodStreams } from '../../../functions/adapters/kube/streams/pod-streams.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { failureOf } from './api-failure.ts';
import { probeUpgrade } from './upgrade-probe.ts';

const NS = 'default';
const MACHINE = { group: 'cluster.x-k8s.io', version: 'v1beta1', namespace: NS, plural: 'machines' };

interface MachineShape {
  metadata: { name: string; annotations?: Record<string, string>; deletionTimestamp?: string };
  status: { nodeRef: { name: string } };
}

let lab: Lab;
let fake: KubeApiFake;
let streams: PodStreams;
const etcdPod = (name: string): PodRef => ({ namespace: 'kube-system', name });
const portForwardPath = (pod: string) => `/api/v1/namespaces/kube-system/pods/${pod}/portforward?ports=2379`;

beforeAll(async () => {
  lab = await startLab({ members: 3 });
  fake = await startKubeApiFake({ machineDeletionMs: 50 });
  lab.members.forEach((member, index) => {
    const node = `cp-${index + 1}`;
    fake.addControlPlaneNode({ name: node, internalIp: `10.0.0.${11 + index}`, machine: { name: `wl-cp-${index + 1}`, namespace: NS, clusterName: 'wl' } });
    const direct = new URL(member.directUrl);
    fake.setUpstream(node, { host: direct.hostname, port: Number(direct.port) });
  });
  streams = createPodStreams(fake.kubeConfig());
});

afterAll(async () => {
  await streams?.close();
  await fake?.stop();
  await lab?.down();
});

async function statusCodeOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
  return 200;
}

describe('kube API fake: REST through client-node', () => {
  it('reads a Node and lists the etcd static pods by label', async () => {
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    const node = await core.readNode({ name: 'cp-2' });
    expect(node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address).toBe('10.0.0.12');
    const pods = await core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'component=etcd' });
    expect(pods.items.map((pod) => [pod.metadata?.name, pod.spec?.nodeName])).toEqual([
      ['etcd-cp-1', 'cp-1'],
      ['etcd-cp-2', 'cp-2'],
      ['etcd-cp-3', 'cp-3'],
    ]);
  });

  it('works from a kubeconfig file, as --kubeconfig will', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-fake-'));
    try {
      const config = new KubeConfig();
      config.loadFromFile(fake.writeKubeconfig(path.join(dir, 'kubeconfig')));
      const nodes = await config.makeApiClient(CoreV1Api).listNode();
      expect(nodes.items.map((node) => node.metadata?.name)).toEqual(['cp-1', 'cp-2', 'cp-3']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a missing object with a NotFound Status', async () => {
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    const error = await core.readNode({ name: 'nope' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiException);
    const body: unknown = JSON.parse(String((error as ApiException<string>).body));
    expect((error as ApiException<string>).code).toBe(404);
    expect(body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', message: 'nodes "nope" not found', code: 404 });
  });

  it('patches a Machine (JSON patch and merge patch) and deletes it through a deletionTimestamp', async () => {
    const custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
    const got = (await custom.getNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-3' })) as unknown as MachineShape;
    expect(got.status.nodeRef.name).toBe('cp-3');
    // client-node's default patch content type is application/json-patch+json.
    await custom.patchNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-3', body: [{ op: 'add', path: '/metadata/annotations', value: { a: '1' } }] });
    const merged = (await custom.patchNamespacedCustomObject(
      { ...MACHINE, name: 'wl-cp-3', body: { metadata: { annotations: { 'etcd-remediator/record': 'incident-1' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as unknown as MachineShape;
    expect(merged.metadata.annotations).toEqual({ a: '1', 'etcd-remediator/record': 'incident-1' });
    const deleting = (await custom.deleteNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-3' })) as unknown as MachineShape;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    await waitFor(async () => ((await statusCodeOf(custom.getNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-3' }))) === 404 ? true : undefined), {
      timeoutMs: 5_000,
      what: 'the deleted Machine to go',
    });
  });

  it('a patch naming another metadata.uid is refused as immutable (rest/update.go BeforeUpdate), and one naming the same uid goes through', async () => {
    const custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const machine = (await custom.getNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-2' })) as { metadata: { uid: string } };
    const refused = await failureOf(
      custom.patchNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-2', body: { metadata: { uid: 'a-replaced-uid', annotations: { a: '1' } } } }, merge),
    );
    expect(refused).toEqual({
      code: 422,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Machine.cluster.x-k8s.io "wl-cp-2" is invalid: metadata.uid: Invalid value: "a-replaced-uid": field is immutable',
        reason: 'Invalid',
        details: {
          name: 'wl-cp-2',
          group: 'cluster.x-k8s.io',
          kind: 'Machine',
          causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "a-replaced-uid": field is immutable', field: 'metadata.uid' }],
        },
        code: 422,
      },
    });
    const patched = (await custom.patchNamespacedCustomObject(
      { ...MACHINE, name: 'wl-cp-2', body: { metadata: { uid: machine.metadata.uid, annotations: { a: '2' } } } },
      merge,
    )) as MachineShape;
    expect(patched.metadata.annotations).toEqual({ a: '2' });
  });

  it('DELETE honours DeleteOptions preconditions: 409 Conflict as BeforeDelete words it, and the object stays', async () => {
    const custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    const machine = (await custom.getNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-1' })) as { metadata: { uid: string; resourceVersion: string } };
    const { uid, resourceVersion } = machine.metadata;
    const conflict = (qualified: string, name: string, why: string, details: Record<string, string>) => ({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Operation cannot be fulfilled on ${qualified} "${name}": ${why}`,
      reason: 'Conflict',
      details,
      code: 409,
    });
    // apiserver pkg/registry/rest/delete.go BeforeDelete: the GroupResource it names holds the Kind.
    expect(await failureOf(custom.deleteNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-1', body: { preconditions: { uid: 'a-replaced-uid' } } }))).toEqual({
      code: 409,
      body: conflict(
        'Machine.cluster.x-k8s.io',
        'wl-cp-1',
        `the UID in the precondition (a-replaced-uid) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
        { name: 'wl-cp-1', group: 'cluster.x-k8s.io', kind: 'Machine' },
      ),
    });
    expect(await failureOf(custom.deleteNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-1', body: { preconditions: { resourceVersion: '1' } } }))).toEqual({
      code: 409,
      body: conflict(
        'Machine.cluster.x-k8s.io',
        'wl-cp-1',
        `the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${resourceVersion}). The object might have been modified`,
        { name: 'wl-cp-1', group: 'cluster.x-k8s.io', kind: 'Machine' },
      ),
    });
    const pod = await core.readNamespacedPod({ namespace: 'kube-system', name: 'etcd-cp-1' });
    expect(await failureOf(core.deleteNamespacedPod({ namespace: 'kube-system', name: 'etcd-cp-1', body: { preconditions: { uid: 'x' } } }))).toEqual({
      code: 409,
      body: conflict(
        'Pod',
        'etcd-cp-1',
        `the UID in the precondition (x) does not match the UID in record (${pod.metadata?.uid}). The object might have been deleted and then recreated`,
        {
          name: 'etcd-cp-1',
          kind: 'Pod',
        },
      ),
    });
    const after = (await custom.getNamespacedCustomObject({ ...MACHINE, name: 'wl-cp-1' })) as MachineShape & { metadata: { resourceVersion: string } };
    expect([after.metadata.deletionTimestamp, after.metadata.resourceVersion]).toEqual([undefined, resourceVersion]);
    // The right uid and resourceVersion let the DELETE through.
    const deleting = (await custom.deleteNamespacedCustomObject({
      ...MACHINE,
      name: 'wl-cp-1',
      body: { preconditions: { uid, resourceVersion } },
    })) as MachineShape;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
  });
});

describe('kube API fake: port-forward through the pod streams', () => {
  it('forwards to the etcd member behind that node', async () => {
    const forward = await streams.forward(etcdPod('etcd-cp-2'), 2379);
    const since = performance.now();
    const status = await gatewayStatus(`http://127.0.0.1:${forward.port}`, 5_000);
    expect(status.memberId).toBe(lab.members[1]!.id);
    expect(await forward.failuresSince(since, 2_000)).toEqual([]);
    expect(await probeUpgrade(fake.kubeConfig(), portForwardPath('etcd-cp-2'))).toEqual({ upgraded: true, protocol: 'v4.channel.k8s.io' });
  });

  /**
   * A port-forward the fake refuses before the upgrade: the adapter sees the refusal and its status;
   * the raw upgrade then reads the fake's answer whole (content type and body, byte for byte).
   */
  async function refusedForward(server: KubeApiFake, pod: string, code: number) {
    const own = createPodStreams(server.kubeConfig());
    try {
      const forward = await own.forward(etcdPod(pod), 2379);
      const since = performance.now();
      await expect(gatewayStatus(`http://127.0.0.1:${forward.port}`, 2_000)).rejects.toThrow();
      const failures = await forward.failuresSince(since, 2_000);
      expect(failures.map((f) => f.status)).toEqual([code]);
    } finally {
      await own.close();
    }
    return probeUpgrade(server.kubeConfig(), portForwardPath(pod));
  }

  it('kubelet down: 500 before the upgrade, a JSON Status saying error dialing backend', async () => {
    fake.kubeletDown('cp-1');
    try {
      const seen = await refusedForward(fake, 'etcd-cp-1', 500);
      expect(seen).toMatchObject({ upgraded: false, status: 500, contentType: 'application/json' });
      const body: unknown = seen.upgraded ? undefined : JSON.parse(seen.body);
      expect(body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'error dialing backend: dial tcp 10.0.0.11:10250: connect: connection refused',
        code: 500,
      });
    } finally {
      fake.heal('cp-1');
    }
  });

  it('containerd down: 500 before the upgrade, a plain-text CRI error', async () => {
    fake.containerdDown('cp-1');
    try {
      const seen = await refusedForward(fake, 'etcd-cp-1', 500);
      expect(seen).toMatchObject({ upgraded: false, status: 500, contentType: 'text/plain; charset=utf-8' });
      expect(seen.upgraded ? '' : seen.body).toMatch(/^rpc error: code = Unavailable .*containerd\.sock: connect: no such file or directory"$/);
    } finally {
      fake.heal('cp-1');
    }
  });

  it("a WebSocket port-forward without ports: the kubelet refuses it (NewV4Options), after the API server's own checks", async () => {
    const withoutPorts = '/api/v1/namespaces/kube-system/pods/etcd-cp-1/portforward';
    expect(await probeUpgrade(fake.kubeConfig(), withoutPorts)).toEqual({
      upgraded: false,
      status: 400,
      contentType: 'text/plain; charset=utf-8',
      body: 'query parameter "port" is required',
    });
    // The API server's checks come first: a missing pod is its 404, a dead kubelet its 500.
    expect(await probeUpgrade(fake.kubeConfig(), '/api/v1/namespaces/kube-system/pods/etcd-cp-7/portforward')).toMatchObject({ upgraded: false, status: 404 });
    fake.kubeletDown('cp-1');
    try {
      expect(await probeUpgrade(fake.kubeConfig(), withoutPorts)).toMatchObject({ upgraded: false, status: 500, contentType: 'application/json' });
    } finally {
      fake.heal('cp-1');
    }
  });

  it('node deleted: 404 naming pods "<node>"', async () => {
    const fake2 = await startKubeApiFake();
    try {
      fake2.addControlPlaneNode({ name: 'cp-9', internalIp: '10.0.0.19' });
      fake2.deleteNode('cp-9');
      const seen = await refusedForward(fake2, 'etcd-cp-9', 404);
      expect(seen.upgraded ? undefined : JSON.parse(seen.body)).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'pods "cp-9" not found',
        reason: 'NotFound',
        details: { name: 'cp-9', kind: 'pods' },
        code: 404,
      });
    } finally {
      await fake2.stop();
    }
  });

  it("etcd not listening: the upgrade succeeds and the error channel carries containerd's text", async () => {
    const victim = lab.members[2]!;
    await lab.kill(victim.name);
    const forward = await streams.forward(etcdPod('etcd-cp-3'), 2379);
    const since = performance.now();
    await expect(gatewayStatus(`http://127.0.0.1:${forward.port}`, 2_000)).rejects.toThrow();
    const failures = await forward.failuresSince(since, 2_000);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ why: 'not-listening', status: undefined });
    // The adapter keeps the error channel's text whole (trimmed) in its message.
    expect(failures[0]!.message).toMatch(
      /^port-forward to kube-system\/etcd-cp-3 failed: error forwarding port 2379 to pod [0-9a-f]{64}, uid : failed to execute portforward in network namespace "host": failed to connect to localhost:2379 inside namespace "[0-9a-f]{64}", IPv4: dial tcp4 127\.0\.0\.1:2379: connect: connection refused IPv6 dial tcp6 \[::1\]:2379: connect: connection refused \(nothing listens on port 2379 in the pod\)$/,
    );
    expect(await probeUpgrade(fake.kubeConfig(), portForwardPath('etcd-cp-3'))).toEqual({ upgraded: true, protocol: 'v4.channel.k8s.io' });
    // The stream ends as wsstream's Close ends it: a normal closure, 1000, after the error channel's text.
    const raw = new WebSocket(`${fake.server.replace(/^http/, 'ws')}${portForwardPath('etcd-cp-3')}`, ['v4.channel.k8s.io'], {
      headers: { Authorization: `Bearer ${fake.token}` },
    });
    const frames: Buffer[] = [];
    raw.on('message', (data: Buffer) => frames.push(data));
    const code = await new Promise<number>((resolve, reject) => {
      raw.on('close', (closeCode: number) => resolve(closeCode));
      raw.on('error', reject);
    });
    expect(code).toBe(1000);
    expect(frames.at(-1)?.subarray(1).toString()).toMatch(/^error forwarding port 2379 to pod /);
  });
});
