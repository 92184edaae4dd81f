// What the kube fake refuses and collects as an API server and its controllers do: NamespaceLifecycle
// (no object in a namespace that is missing or terminating; the system namespaces not deletable),
// the garbage collector (a dependent goes with its last owner, held by its finalizers), no new
// finalizer on an object being deleted, and a Node whose container runtime is down posted Ready
// False, not Unknown. client-node, unmodified, is the client.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

let fake: KubeApiFake;
let core: CoreV1Api;
let custom: CustomObjectsApi;

beforeEach(async () => {
  fake = await startKubeApiFake({ runtimeDownNoticedMs: 100 });
  core = fake.kubeConfig().makeApiClient(CoreV1Api);
  custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
});
afterEach(async () => {
  await fake.stop();
});

const bodyOf = (error: unknown): { code?: number; message?: string } => JSON.parse((error as { body: string }).body) as { code?: number; message?: string };
const refusal = (promise: Promise<unknown>) => promise.then(() => ({ code: 0, message: 'accepted' }), bodyOf);
const secret = (name: string, extra: Record<string, unknown> = {}) => ({ metadata: { name, ...extra }, stringData: { a: 'b' } });
const requestIn = (namespace: string, name: string, metadata: Record<string, unknown> = {}) => ({
  group: REQUEST_GROUP,
  version: REQUEST_VERSION,
  namespace,
  plural: REQUEST_PLURAL,
  body: { apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`, kind: 'EtcdRemediationRequest', metadata: { name, ...metadata }, spec: {} },
});

describe('kube API fake: lifecycle', () => {
  it('refuses an object in a namespace that does not exist, with the API server’s words; the system namespaces are there', async () => {
    expect(await refusal(core.createNamespacedSecret({ namespace: 'capi', body: secret('s') }))).toMatchObject({
      code: 404,
      message: 'namespaces "capi" not found',
    });
    expect((await core.listNamespace()).items.map((n) => n.metadata?.name).sort()).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    await core.createNamespace({ body: { metadata: { name: 'capi' } } });
    expect((await core.createNamespacedSecret({ namespace: 'capi', body: secret('s') })).metadata?.namespace).toBe('capi');
  });

  it('a deleted namespace terminates: new content refused, its objects go, then it does; default cannot be deleted', async () => {
    await core.createNamespace({ body: { metadata: { name: 'gone' } } });
    await core.createNamespacedSecret({ namespace: 'gone', body: secret('s') });
    const terminating = await core.deleteNamespace({ name: 'gone' });
    expect((terminating as { status?: { phase?: string } }).status?.phase).toBe('Terminating');
    expect(await refusal(core.createNamespacedSecret({ namespace: 'gone', body: secret('t') }))).toMatchObject({
      code: 403,
      message: 'secrets "t" is forbidden: unable to create new content in namespace gone because it is being terminated',
    });
    await waitFor(async () => ((await core.listNamespace()).items.some((n) => n.metadata?.name === 'gone') ? undefined : true), {
      timeoutMs: 5_000,
      what: 'the namespace to go',
    });
    expect(await refusal(core.deleteNamespace({ name: 'default' }))).toMatchObject({
      code: 403,
      message: 'namespaces "default" is forbidden: this namespace may not be deleted',
    });
  });

  it('the garbage collector deletes a dependent with its last owner; a finalizer holds it Terminating, and it goes once removed', async () => {
    const owner = await core.createNamespacedSecret({ namespace: 'default', body: secret('owner') });
    const ownerReferences = [{ apiVersion: 'v1', kind: 'Secret', name: 'owner', uid: owner.metadata!.uid! }];
    await custom.createNamespacedCustomObject(requestIn('default', 'plain', { ownerReferences }));
    await custom.createNamespacedCustomObject(requestIn('default', 'held', { ownerReferences, finalizers: ['etcd-remediator.io/outcome'] }));
    const get = (name: string) =>
      custom.getNamespacedCustomObject({ group: REQUEST_GROUP, version: REQUEST_VERSION, namespace: 'default', plural: REQUEST_PLURAL, name }).then(
        (o) => o as { metadata: { deletionTimestamp?: string; finalizers?: string[] } },
        () => undefined,
      );
    await core.deleteNamespacedSecret({ namespace: 'default', name: 'owner' });
    await waitFor(async () => ((await get('plain')) ? undefined : true), { timeoutMs: 5_000, what: 'the dependent to be collected' });
    const held = await waitFor(async () => ((await get('held'))?.metadata.deletionTimestamp ? get('held') : undefined), {
      timeoutMs: 5_000,
      what: 'the held dependent to be marked',
    });
    expect(held?.metadata.finalizers).toEqual(['etcd-remediator.io/outcome']);
    // A status write on a Terminating object is accepted; a new finalizer is not.
    const coordinates = { group: REQUEST_GROUP, version: REQUEST_VERSION, namespace: 'default', plural: REQUEST_PLURAL, name: 'held' };
    expect(
      await refusal(custom.patchNamespacedCustomObject({ ...coordinates, body: [{ op: 'add', path: '/metadata/finalizers/-', value: 'other.io/x' }] })),
    ).toMatchObject({
      code: 422,
      message: expect.stringContaining(
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"other.io/x"}',
      ),
    });
    await custom.patchNamespacedCustomObject({ ...coordinates, body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    await waitFor(async () => ((await get('held')) ? undefined : true), { timeoutMs: 5_000, what: 'the held dependent to go once its finalizer did' });
    expect(fake.garbageCollector?.collected).toEqual(['etcdremediationrequests/default/plain', 'etcdremediationrequests/default/held']);
  });

  it('a container runtime that stops: the kubelet still posts, Ready False "container runtime is down", tainted not-ready, never unreachable', async () => {
    fake.addControlPlaneNode({ name: 'cp-1', internalIp: '10.0.0.11' });
    fake.containerdDown('cp-1');
    const node = await waitFor(
      async () => {
        const read = await core.readNode({ name: 'cp-1' });
        return read.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'False' ? read : undefined;
      },
      { timeoutMs: 5_000, what: 'Ready False' },
    );
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ reason: 'KubeletNotReady', message: 'container runtime is down' });
    expect(node.spec?.taints?.map((t) => `${t.key}:${t.effect}`).sort()).toEqual([
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/not-ready:NoSchedule',
    ]);
    fake.heal('cp-1');
    const healed = await core.readNode({ name: 'cp-1' });
    expect(healed.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(healed.spec?.taints).toBeUndefined();
  });
});
