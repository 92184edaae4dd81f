// The kube fake's custom resources, status subresource and watches, through client-node's own
// CustomObjectsApi, Watch, ListWatch and makeInformer, unmodified.
import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ApiException,
  CustomObjectsApi,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  PatchStrategy,
  Watch,
  makeInformer,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

const NS = 'capi';
const GROUP = 'etcd-remediator.io';
const REQUESTS = { group: GROUP, version: 'v1alpha1', namespace: NS, plural: 'etcdremediationrequests' };
const PATH = `/apis/${GROUP}/v1alpha1/namespaces/${NS}/etcdremediationrequests`;

interface RequestObject extends KubernetesObject {
  spec?: { reason?: string };
  status?: { phase?: string; reasonCode?: string };
}

let fake: KubeApiFake;
let custom: CustomObjectsApi;

beforeEach(async () => {
  fake = await startKubeApiFake();
  // The API server refuses objects in a namespace that does not exist (NamespaceLifecycle).
  fake.addNamespace(NS);
  custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
});

afterEach(async () => {
  await fake.stop();
});

const request = (name: string, extra: Partial<RequestObject> = {}): RequestObject => ({
  apiVersion: `${GROUP}/v1alpha1`,
  kind: 'EtcdRemediationRequest',
  metadata: { name, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'wl' } },
  spec: { reason: 'Node not Ready' },
  ...extra,
});

const create = async (name: string, extra: Partial<RequestObject> = {}) =>
  (await custom.createNamespacedCustomObject({ ...REQUESTS, body: request(name, extra) })) as RequestObject;
const get = async (name: string) => (await custom.getNamespacedCustomObject({ ...REQUESTS, name })) as RequestObject;
const list = async () => (await custom.listNamespacedCustomObject(REQUESTS)) as KubernetesListObject<RequestObject>;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const patchStatus = async (name: string, status: RequestObject['status'], metadata: Record<string, unknown> = {}) =>
  (await custom.patchNamespacedCustomObjectStatus({ ...REQUESTS, name, body: { metadata, status } }, mergePatch)) as RequestObject;
const patch = async (name: string, body: Partial<RequestObject>) =>
  (await custom.patchNamespacedCustomObject({ ...REQUESTS, name, body }, mergePatch)) as RequestObject;
const remove = (name: string) => custom.deleteNamespacedCustomObject({ ...REQUESTS, name });
const rv = (object: KubernetesObject | undefined) => Number(object?.metadata?.resourceVersion);

async function failure(call: Promise<unknown>): Promise<{ code: number; body: unknown }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiException);
  const api = error as ApiException<string>;
  return { code: api.code, body: JSON.parse(String(api.body)) };
}

describe('kube API fake: custom resources and the status subresource', () => {
  it("creates with the server's bookkeeping, drops status on create, and answers a second create 409 AlreadyExists", async () => {
    const created = await create('wl-cp-1', { status: { phase: 'Completed' } });
    expect(created.metadata).toMatchObject({ name: 'wl-cp-1', namespace: NS, generation: 1, uid: expect.any(String), creationTimestamp: expect.any(String) });
    expect(rv(created)).toBeGreaterThan(0);
    expect(created.status).toBeUndefined();
    expect(await failure(create('wl-cp-1'))).toEqual({
      code: 409,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'etcdremediationrequests.etcd-remediator.io "wl-cp-1" already exists',
        reason: 'AlreadyExists',
        details: { name: 'wl-cp-1', group: GROUP, kind: 'etcdremediationrequests' },
        code: 409,
      },
    });
  });

  it('/status changes status only; the main resource ignores status; generation counts spec changes', async () => {
    const created = await create('wl-cp-1');
    const running = await patchStatus('wl-cp-1', { phase: 'Running' }, { labels: { sneaky: 'yes' } });
    expect(running.status).toEqual({ phase: 'Running' });
    expect(running.metadata?.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'wl' });
    expect(running.metadata?.generation).toBe(1);
    expect(rv(running)).toBeGreaterThan(rv(created));

    const edited = await patch('wl-cp-1', { spec: { reason: 'Node not Ready for 5m' }, status: { phase: 'Failed' } });
    expect(edited.status).toEqual({ phase: 'Running' });
    expect(edited.spec).toEqual({ reason: 'Node not Ready for 5m' });
    expect(edited.metadata?.generation).toBe(2);

    const relabelled = await patch('wl-cp-1', { metadata: { annotations: { a: '1' } } });
    expect(relabelled.metadata?.generation).toBe(2);
    // A write that changes nothing is no change: same resourceVersion.
    expect(rv(await patch('wl-cp-1', { metadata: { annotations: { a: '1' } } }))).toBe(rv(relabelled));
    expect((await custom.getNamespacedCustomObjectStatus({ ...REQUESTS, name: 'wl-cp-1' })) as RequestObject).toEqual(await get('wl-cp-1'));
  });

  it('a PUT with a stale resourceVersion is a 409 Conflict', async () => {
    const created = await create('wl-cp-1');
    await patchStatus('wl-cp-1', { phase: 'Running' });
    const stale = await failure(custom.replaceNamespacedCustomObject({ ...REQUESTS, name: 'wl-cp-1', body: { ...created, spec: { reason: 'replaced' } } }));
    expect(stale).toMatchObject({
      code: 409,
      body: {
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on etcdremediationrequests.etcd-remediator.io "wl-cp-1": the object has been modified; please apply your changes to the latest version and try again',
      },
    });
    const current = await get('wl-cp-1');
    const replaced = (await custom.replaceNamespacedCustomObject({
      ...REQUESTS,
      name: 'wl-cp-1',
      body: { ...current, spec: { reason: 'replaced' } },
    })) as RequestObject;
    expect(replaced.spec).toEqual({ reason: 'replaced' });
    expect(replaced.status).toEqual({ phase: 'Running' });
  });

  it('DELETE: gone at once, or held by a finalizer until the last one is patched away', async () => {
    await create('plain');
    expect(await remove('plain')).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'plain', group: GROUP, kind: 'etcdremediationrequests', uid: expect.stringMatching(/.+/) },
    });
    expect((await failure(get('plain'))).code).toBe(404);

    await create('held', { metadata: { name: 'held', namespace: NS, finalizers: ['etcd-remediator.io/incident'] } });
    const deleting = (await remove('held')) as RequestObject;
    expect(deleting.metadata?.deletionTimestamp).toBeDefined();
    expect((await get('held')).metadata?.deletionTimestamp).toBeDefined();
    await patch('held', { metadata: { finalizers: null } as unknown as RequestObject['metadata'] });
    expect((await failure(get('held'))).code).toBe(404);
  });

  it("LIST carries the list's resourceVersion; templates and Clusters are served", async () => {
    await create('a');
    const last = await patchStatus('a', { phase: 'Pending' });
    expect((await list()).metadata?.resourceVersion).toBe(last.metadata?.resourceVersion);
    await custom.createNamespacedCustomObject({
      ...REQUESTS,
      plural: 'etcdremediationrequesttemplates',
      body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'EtcdRemediationRequestTemplate', metadata: { name: 't' }, spec: { template: { spec: {} } } },
    });
    expect(
      ((await custom.listNamespacedCustomObject({ ...REQUESTS, plural: 'etcdremediationrequesttemplates' })) as KubernetesListObject<KubernetesObject>).items,
    ).toHaveLength(1);
    await custom.createNamespacedCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta2',
      namespace: NS,
      plural: 'clusters',
      body: { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { name: 'wl' } },
    });
    expect(
      (await custom.getNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        namespace: NS,
        plural: 'clusters',
        name: 'wl',
      })) as KubernetesObject,
    ).toMatchObject({ metadata: { name: 'wl' } });
  });
});

interface Seen {
  type: string;
  name?: string;
  rv: number;
  phase?: string;
  object: KubernetesObject;
}

/** client-node's Watch on the requests, recording every event until stopped. */
async function watchRequests(query: Record<string, string | boolean>) {
  const seen: Seen[] = [];
  let ended: unknown = 'open';
  const controller = await new Watch(fake.kubeConfig()).watch(
    PATH,
    query,
    (type, object: RequestObject) => seen.push({ type, name: object.metadata?.name, rv: rv(object), phase: object.status?.phase, object }),
    (error: unknown) => {
      ended = error;
    },
  );
  await waitFor(async () => (fake.openWatches > 0 || ended !== 'open' ? true : undefined), { timeoutMs: 2_000, what: 'the watch to open' });
  return { seen, ended: () => ended, stop: () => controller.abort() };
}

describe('kube API fake: watch through client-node Watch', () => {
  it('create, status patch and delete arrive in order, each with its resourceVersion', async () => {
    const from = (await list()).metadata!.resourceVersion!;
    const watch = await watchRequests({ resourceVersion: from });
    const created = await create('wl-cp-2');
    const patched = await patchStatus('wl-cp-2', { phase: 'Running' });
    await remove('wl-cp-2');
    await waitFor(async () => (watch.seen.length >= 3 ? true : undefined), { timeoutMs: 2_000, what: 'three events' });
    watch.stop();
    expect(watch.seen.map(({ type, name, phase }) => [type, name, phase])).toEqual([
      ['ADDED', 'wl-cp-2', undefined],
      ['MODIFIED', 'wl-cp-2', 'Running'],
      ['DELETED', 'wl-cp-2', 'Running'],
    ]);
    expect(watch.seen.map((event) => event.rv)).toEqual([rv(created), rv(patched), rv(patched) + 1]);
  });

  it('without a resourceVersion it starts with an ADDED per object; selectors filter, and leaving the filter is a DELETED', async () => {
    await create('a');
    await create('b', { metadata: { name: 'b', namespace: NS, labels: { other: 'x' } } });
    const watch = await watchRequests({ labelSelector: 'cluster.x-k8s.io/cluster-name=wl' });
    await patch('a', { metadata: { labels: { 'cluster.x-k8s.io/cluster-name': 'elsewhere' } } });
    await patch('b', { metadata: { labels: { 'cluster.x-k8s.io/cluster-name': 'wl' } } });
    await waitFor(async () => (watch.seen.length >= 3 ? true : undefined), { timeoutMs: 2_000, what: 'three events' });
    watch.stop();
    expect(watch.seen.map(({ type, name }) => [type, name])).toEqual([
      ['ADDED', 'a'],
      ['DELETED', 'a'],
      ['ADDED', 'b'],
    ]);
  });

  it('a field selector on the name, and timeoutSeconds ending the stream cleanly', async () => {
    const watch = await watchRequests({ resourceVersion: (await list()).metadata!.resourceVersion!, fieldSelector: 'metadata.name=b', timeoutSeconds: '1' });
    await create('a');
    await create('b');
    await waitFor(async () => (watch.ended() !== 'open' ? true : undefined), { timeoutMs: 3_000, what: 'the watch to time out' });
    expect(watch.ended()).toBeNull();
    expect(watch.seen.map(({ type, name }) => [type, name])).toEqual([['ADDED', 'b']]);
  });

  it('a resourceVersion older than the history: one ERROR event with a 410 Expired Status, then the end', async () => {
    const small = await startKubeApiFake({ watchHistoryLimit: 3 });
    small.addNamespace(NS);
    try {
      const api = small.kubeConfig().makeApiClient(CustomObjectsApi);
      const from = Number(((await api.listNamespacedCustomObject(REQUESTS)) as KubernetesListObject<RequestObject>).metadata?.resourceVersion);
      for (const name of ['a', 'b', 'c', 'd', 'e']) await api.createNamespacedCustomObject({ ...REQUESTS, body: request(name) });
      const events: { type: string; object: unknown }[] = [];
      const done = new Promise<unknown>((resolve) => {
        void new Watch(small.kubeConfig()).watch(PATH, { resourceVersion: String(from) }, (type, object) => events.push({ type, object }), resolve);
      });
      expect(await done).toBeNull();
      // Five changes after `from`, three kept: the oldest a watch can start from is from + 2.
      expect(events).toEqual([
        {
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `too old resource version: ${from} (${from + 2})`,
            reason: 'Expired',
            code: 410,
          },
        },
      ]);
    } finally {
      await small.stop();
    }
  });

  it('BOOKMARK events when allowed, carrying the current resourceVersion', async () => {
    const plain = await watchRequests({ resourceVersion: (await list()).metadata!.resourceVersion! });
    const watch = await watchRequests({ resourceVersion: (await list()).metadata!.resourceVersion!, allowWatchBookmarks: true });
    const created = await create('a');
    await waitFor(async () => (watch.seen.length >= 1 && plain.seen.length >= 1 ? true : undefined), { timeoutMs: 2_000, what: 'the ADDED' });
    fake.sendWatchBookmarks();
    await waitFor(async () => (watch.seen.length >= 2 ? true : undefined), { timeoutMs: 2_000, what: 'the BOOKMARK' });
    watch.stop();
    plain.stop();
    expect(watch.seen[1]).toMatchObject({ type: 'BOOKMARK', rv: rv(created), object: { kind: 'EtcdRemediationRequest', apiVersion: `${GROUP}/v1alpha1` } });
    expect(plain.seen.map((event) => event.type)).toEqual(['ADDED']);
  });

  it('watch=1 is a watch too: chunked JSON lines', async () => {
    await create('a');
    const { headers, line } = await new Promise<{ headers: http.IncomingHttpHeaders; line: string }>((resolve, reject) => {
      const get = http.get(`${fake.server}${PATH}?watch=1&resourceVersion=1`, (response) => {
        response.setEncoding('utf8');
        let text = '';
        response.on('data', (chunk: string) => {
          text += chunk;
          if (text.includes('\n')) {
            resolve({ headers: response.headers, line: text.split('\n')[0]! });
            get.destroy();
          }
        });
      });
      get.on('error', reject);
    });
    expect(headers['content-type']).toBe('application/json');
    expect(headers['transfer-encoding']).toBe('chunked');
    expect(JSON.parse(line)).toMatchObject({ type: 'ADDED', object: { kind: 'EtcdRemediationRequest', metadata: { name: 'a' } } });
  });
});

/** What an informer's callbacks saw, as `add a`, `update a Running`, `delete a`. */
function record(informer: ListWatch<RequestObject> | ReturnType<typeof makeInformer<RequestObject>>) {
  const log: string[] = [];
  informer.on('add', (o) => log.push(`add ${o.metadata?.name}`));
  informer.on('update', (o) => log.push(`update ${o.metadata?.name} ${o.status?.phase ?? '-'}`));
  informer.on('delete', (o) => log.push(`delete ${o.metadata?.name}`));
  return log;
}

describe('kube API fake: ListWatch and makeInformer resume and relist', () => {
  let lists: number;
  const listFn = async () => {
    lists++;
    return list();
  };
  const until = (what: string, check: () => boolean) => waitFor(async () => (check() ? true : undefined), { timeoutMs: 5_000, what });

  beforeEach(() => {
    lists = 0;
  });

  it('a dropped connection (network blip): the informer restarted on its error resumes from its resourceVersion, nothing lost or repeated', async () => {
    const informer = makeInformer<RequestObject>(fake.kubeConfig(), PATH, listFn);
    const log = record(informer);
    const errors: unknown[] = [];
    // The restart a client-node informer needs after an error.
    informer.on('error', (error: unknown) => errors.push(error));
    await create('a');
    await informer.start();
    await create('b');
    await until('b', () => log.includes('add b'));

    fake.dropWatches();
    await until('the informer to see the drop', () => errors.length === 1);
    // Changes while it is disconnected come from the history when it resumes.
    await patchStatus('a', { phase: 'Running' });
    await remove('b');
    await informer.start();
    await create('c');
    await until('c', () => log.includes('add c'));
    await informer.stop();
    expect(log).toEqual(['add a', 'add b', 'update a Running', 'delete b', 'add c']);
    expect(lists).toBe(1);
    expect(
      informer
        .list(NS)
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['a', 'c']);
  });

  it('a watch the server ends: ListWatch reconnects by itself from its resourceVersion', async () => {
    const informer = new ListWatch<RequestObject>(PATH, new Watch(fake.kubeConfig()), listFn, false, undefined, undefined, { delayFn: async () => {} });
    const log = record(informer);
    await create('a');
    await informer.start();
    await until('the watch', () => fake.openWatches === 1);
    fake.dropWatches('end');
    await patchStatus('a', { phase: 'Waiting' });
    await create('b');
    await until('b', () => log.includes('add b'));
    await until('the watch again', () => fake.openWatches === 1);
    await patchStatus('b', { phase: 'Running' });
    await until('b Running', () => log.includes('update b Running'));
    await informer.stop();
    expect(log).toEqual(['add a', 'update a Waiting', 'add b', 'update b Running']);
    expect(lists).toBe(1);
  });

  it('410 Gone after compaction: the informer relists and its cache ends right', async () => {
    const informer = makeInformer<RequestObject>(fake.kubeConfig(), PATH, listFn);
    const log = record(informer);
    let errors = 0;
    informer.on('error', () => errors++);
    await create('a');
    await create('b');
    await informer.start();
    await until('the watch', () => fake.openWatches === 1);

    fake.dropWatches();
    await until('the drop', () => errors === 1);
    await remove('a');
    await create('c');
    fake.compactWatchHistory();
    await informer.start();
    await until('the relist', () => lists === 2 && log.includes('add c'));
    await until('the watch after the relist', () => fake.openWatches === 1);
    await patchStatus('c', { phase: 'Completed' });
    await until('c Completed', () => log.includes('update c Completed'));
    await informer.stop();
    expect(log).toEqual(['add a', 'add b', 'delete a', 'add c', 'update c Completed']);
    expect(
      informer
        .list(NS)
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['b', 'c']);
    expect(errors).toBe(1);
  });
});
