// core/v1 Events in the kube fake, through client-node as a controller writes them: created,
// listed by the field selectors kubectl describe uses (involvedObject.*), counted again by a merge
// patch, watched, printed as the server's Table for kubectl get; and refused as the API server
// refuses them (an Event outside its object's namespace or without one, an eventTime'd Event
// without its reporting fields or with a message over 1024 bytes, a field label Events lack).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiException, CoreV1Api, PatchStrategy, Watch, setHeaderOptions, type CoreV1Event } from '@kubernetes/client-node';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

let fake: KubeApiFake;
let core: CoreV1Api;

beforeEach(async () => {
  fake = await startKubeApiFake();
  // The API server refuses objects in a namespace that does not exist (NamespaceLifecycle).
  fake.addNamespace('capi');
  core = fake.kubeConfig().makeApiClient(CoreV1Api);
});

afterEach(async () => {
  await fake.stop();
});

const machine = { kind: 'Machine', apiVersion: 'cluster.x-k8s.io/v1beta1', namespace: 'capi', name: 'cp-0', uid: 'u-0' };

const eventOn = (name: string, involvedObject: CoreV1Event['involvedObject'], extra: Partial<CoreV1Event> = {}): CoreV1Event => ({
  metadata: { name, namespace: 'capi' },
  involvedObject,
  reason: 'LEADER_MOVED',
  message: 'leadership moved',
  type: 'Normal',
  count: 1,
  firstTimestamp: new Date('2026-01-01T00:00:00Z'),
  lastTimestamp: new Date('2026-01-01T00:00:00Z'),
  source: { component: 'etcd-remediator' },
  ...extra,
});

/** The 422's message, or a failure when the write went through. */
async function refusal(write: Promise<unknown>): Promise<string> {
  const error = await write.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiException);
  const exception = error as ApiException<string>;
  return `${exception.code} ${(JSON.parse(exception.body) as { message: string }).message}`;
}

describe('kube API fake: Events', () => {
  it("lists an object's Events by involvedObject, as kubectl describe asks, and counts a repeat by a merge patch", async () => {
    await core.createNamespacedEvent({ namespace: 'capi', body: eventOn('cp-0.1', machine) });
    await core.createNamespacedEvent({ namespace: 'capi', body: eventOn('cp-1.1', { ...machine, name: 'cp-1', uid: 'u-1' }) });
    const selector = 'involvedObject.name=cp-0,involvedObject.namespace=capi,involvedObject.kind=Machine,involvedObject.uid=u-0';
    const listed = await core.listNamespacedEvent({ namespace: 'capi', fieldSelector: selector });
    expect(listed.items.map((e) => e.metadata.name)).toEqual(['cp-0.1']);
    expect((await core.listNamespacedEvent({ namespace: 'capi', fieldSelector: 'reason=LEADER_MOVED,source=etcd-remediator' })).items).toHaveLength(2);

    await core.patchNamespacedEvent(
      { namespace: 'capi', name: 'cp-0.1', body: { count: 2, lastTimestamp: '2026-01-01T00:01:00Z' } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const patched = await core.readNamespacedEvent({ namespace: 'capi', name: 'cp-0.1' });
    expect(patched.count).toBe(2);
    expect(patched.lastTimestamp?.toISOString()).toBe('2026-01-01T00:01:00.000Z');
    expect(patched.firstTimestamp?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it("a watch with a field selector sees the object's Events only", async () => {
    const seen: string[] = [];
    const watch = await new Watch(fake.kubeConfig()).watch(
      '/api/v1/namespaces/capi/events',
      { fieldSelector: 'involvedObject.name=cp-0' },
      (_type, object: CoreV1Event) => seen.push(object.metadata.name!),
      () => undefined,
    );
    await core.createNamespacedEvent({ namespace: 'capi', body: eventOn('cp-1.1', { ...machine, name: 'cp-1' }) });
    await core.createNamespacedEvent({ namespace: 'capi', body: eventOn('cp-0.1', machine) });
    await waitFor(async () => (seen.length > 0 ? true : undefined), { timeoutMs: 5_000, what: 'the watched Event' });
    expect(seen).toEqual(['cp-0.1']);
    watch.abort();
  });

  it("refuses an Event outside its object's namespace, and one about no object outside default", async () => {
    expect(await refusal(core.createNamespacedEvent({ namespace: 'capi', body: eventOn('x.1', { ...machine, namespace: 'other' }) }))).toBe(
      '422 Event "x.1" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace',
    );
    expect(await refusal(core.createNamespacedEvent({ namespace: 'capi', body: eventOn('x.2', {}) }))).toBe(
      '422 Event "x.2" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace',
    );
    // A Node's Events go in default.
    await core.createNamespacedEvent({ namespace: 'default', body: { ...eventOn('node.1', { kind: 'Node', name: 'cp-0' }), metadata: { name: 'node.1' } } });
  });

  it('holds an Event with an eventTime to the events.k8s.io rules: reporting fields, and a message of at most 1024 bytes', async () => {
    const modern = { eventTime: new Date(), reportingComponent: 'etcd-remediator', reportingInstance: 'watch-0', action: 'Approve' };
    await core.createNamespacedEvent({ namespace: 'capi', body: eventOn('ok.1', machine, { ...modern, message: 'x'.repeat(1024) }) });
    expect(await refusal(core.createNamespacedEvent({ namespace: 'capi', body: eventOn('long.1', machine, { ...modern, message: 'x'.repeat(1025) }) }))).toBe(
      '422 Event "long.1" is invalid: message: Invalid value: "": can have at most 1024 characters',
    );
    expect(await refusal(core.createNamespacedEvent({ namespace: 'capi', body: eventOn('bare.1', machine, { eventTime: new Date() }) }))).toBe(
      "422 Event \"bare.1\" is invalid: [reportingComponent: Required value, reportingComponent: Invalid value: \"\": name part must be non-empty, reportingComponent: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), reportingInstance: Required value, action: Required value]",
    );
  });

  it("answers kubectl get's Accept for a Table with the API server's event columns and cells", async () => {
    await core.createNamespacedEvent({
      namespace: 'capi',
      body: eventOn('cp-0.1', machine, { count: 3, lastTimestamp: new Date(Date.now() - 90_000), firstTimestamp: new Date(Date.now() - 600_000) }),
    });
    const answer = await fetch(`${fake.server}/api/v1/namespaces/capi/events`, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    const table = (await answer.json()) as {
      kind: string;
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[]; object: { kind: string; metadata: { name: string } } }[];
    };
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((c) => c.name)).toEqual([
      'Last Seen',
      'Type',
      'Reason',
      'Object',
      'Subobject',
      'Source',
      'Message',
      'First Seen',
      'Count',
      'Name',
    ]);
    expect(table.rows[0]!.cells).toEqual(['90s', 'Normal', 'LEADER_MOVED', 'machine/cp-0', '', 'etcd-remediator', 'leadership moved', '10m', 3, 'cp-0.1']);
    expect(table.rows[0]!.object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'cp-0.1' } });
    // -o json asks for JSON: the list.
    const list = (await (await fetch(`${fake.server}/api/v1/namespaces/capi/events`, { headers: { accept: 'application/json' } })).json()) as { kind: string };
    expect(list.kind).toBe('EventList');
  });

  it('refuses a field label Events do not have, as the API server does', async () => {
    expect(await refusal(core.listNamespacedEvent({ namespace: 'capi', fieldSelector: 'regarding.name=cp-0' }))).toBe(
      '400 field label not supported: regarding.name',
    );
  });
});
