// The kube fake admits the project's custom resources as an API server with our CRDs installed
// does (infra/kubernetes/deploy/crds): unknown fields pruned with a Warning, the openAPIV3Schema enforced
// with 422 Invalid and one cause per field, and the status subresource keeping spec and status
// apart. client-node, unmodified, is the client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { failureOf } from './api-failure.ts';

const NS = 'capi';
const GROUP = 'etcd-remediator.io';
const REQUESTS = { group: GROUP, version: 'v1alpha1', namespace: NS, plural: 'etcdremediationrequests' };
const TEMPLATES = { group: GROUP, version: 'v1alpha1', namespace: NS, plural: 'etcdremediationrequesttemplates' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface Stored {
  metadata: { name: string; generation: number };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

let fake: KubeApiFake;
let custom: CustomObjectsApi;

beforeAll(async () => {
  fake = await startKubeApiFake();
  // The API server refuses objects in a namespace that does not exist (NamespaceLifecycle).
  fake.addNamespace(NS);
  custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  await fake?.stop();
});

async function createRequest(name: string, spec: Record<string, unknown> = { reason: 'MHC: NodeReady False' }): Promise<Stored> {
  return (await custom.createNamespacedCustomObject({
    ...REQUESTS,
    body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'EtcdRemediationRequest', metadata: { name }, spec },
  })) as Stored;
}

const invalid = (kind: string, name: string, message: string, causes: { reason: string; message: string; field: string }[]) => ({
  code: 422,
  body: {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${kind}.${GROUP} "${name}" is invalid: ${message}`,
    reason: 'Invalid',
    details: { name, group: GROUP, kind, causes },
    code: 422,
  },
});

describe('kube API fake: custom resources against their CRD schema', () => {
  it('prunes unknown fields on create and says so in a Warning header, as fieldValidation=Warn does', async () => {
    const created = await custom.createNamespacedCustomObjectWithHttpInfo({
      ...REQUESTS,
      body: {
        apiVersion: `${GROUP}/v1alpha1`,
        kind: 'EtcdRemediationRequest',
        metadata: { name: 'wl-cp-1' },
        spec: { reason: 'MHC', paths: ['direct'], dryRun: true },
      },
    });
    expect(created.httpStatusCode).toBe(201);
    expect(created.headers.warning).toBe('299 - "unknown field \\"spec.paths\\"", 299 - "unknown field \\"spec.dryRun\\""');
    const stored = (await custom.getNamespacedCustomObject({ ...REQUESTS, name: 'wl-cp-1' })) as Stored;
    expect(stored.spec).toEqual({ reason: 'MHC' });
  });

  it('refuses an unsupported status.phase with 422 Invalid, FieldValueNotSupported, and keeps the stored status', async () => {
    await createRequest('wl-cp-2');
    await custom.patchNamespacedCustomObjectStatus({ ...REQUESTS, name: 'wl-cp-2', body: { status: { phase: 'Running' } } }, mergePatch);
    const phases = '"Pending", "Running", "Waiting", "AwaitingReplacement", "Completed", "Blocked", "Failed", "Cancelled", "Recovered"';
    expect(
      await failureOf(custom.patchNamespacedCustomObjectStatus({ ...REQUESTS, name: 'wl-cp-2', body: { status: { phase: 'NotAPhase' } } }, mergePatch)),
    ).toEqual(
      invalid('EtcdRemediationRequest', 'wl-cp-2', `status.phase: Unsupported value: "NotAPhase": supported values: ${phases}`, [
        { reason: 'FieldValueNotSupported', message: `Unsupported value: "NotAPhase": supported values: ${phases}`, field: 'status.phase' },
      ]),
    );
    expect(((await custom.getNamespacedCustomObject({ ...REQUESTS, name: 'wl-cp-2' })) as Stored).status).toEqual({ phase: 'Running' });
  });

  it('names every bad field at once: required, type, pattern, format, length', async () => {
    await createRequest('wl-cp-3');
    const status = {
      observedGeneration: 'one',
      startedAt: 'yesterday',
      reasonCode: 'X'.repeat(257),
      conditions: [{ type: 'Ready', status: 'Maybe', reason: 'not a reason', lastTransitionTime: '2026-12-01T00:00:00Z' }],
    };
    const seen = await failureOf(custom.patchNamespacedCustomObjectStatus({ ...REQUESTS, name: 'wl-cp-3', body: { status } }, mergePatch));
    const causes = [
      { reason: 'FieldValueTooLong', message: 'Too long: may not be more than 256 bytes', field: 'status.reasonCode' },
      {
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "yesterday": status.startedAt in body must be of type date-time: "yesterday"',
        field: 'status.startedAt',
      },
      {
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "string": status.observedGeneration in body must be of type integer: "string"',
        field: 'status.observedGeneration',
      },
      { reason: 'FieldValueRequired', message: 'Required value', field: 'status.conditions[0].message' },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "not a reason": status.conditions[0].reason in body should match \'^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$\'',
        field: 'status.conditions[0].reason',
      },
      {
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "Maybe": supported values: "True", "False", "Unknown"',
        field: 'status.conditions[0].status',
      },
    ];
    expect(seen.code).toBe(422);
    const body = seen.body as { message: string; details: { causes: typeof causes } };
    expect(body.details.causes).toEqual(expect.arrayContaining(causes));
    expect(body.details.causes).toHaveLength(causes.length);
    expect(body.message).toBe(
      `EtcdRemediationRequest.${GROUP} "wl-cp-3" is invalid: [${body.details.causes.map((c) => `${c.field}: ${c.message}`).join(', ')}]`,
    );
  });

  it('refuses two conditions of one type: the conditions are a map keyed by type', async () => {
    await createRequest('wl-cp-6');
    const ready = { type: 'Ready', status: 'False', reason: 'Running', message: 'm', lastTransitionTime: '2026-12-01T00:00:00Z' };
    const twice = { status: { conditions: [ready, { ...ready, type: 'Paused' }, { ...ready, status: 'True' }] } };
    expect(await failureOf(custom.patchNamespacedCustomObjectStatus({ ...REQUESTS, name: 'wl-cp-6', body: twice }, mergePatch))).toEqual(
      invalid('EtcdRemediationRequest', 'wl-cp-6', 'status.conditions[2]: Duplicate value: map[string]interface {}{"type":"Ready"}', [
        { reason: 'FieldValueDuplicate', message: 'Duplicate value: map[string]interface {}{"type":"Ready"}', field: 'status.conditions[2]' },
      ]),
    );
    await custom.patchNamespacedCustomObjectStatus(
      { ...REQUESTS, name: 'wl-cp-6', body: { status: { conditions: twice.status.conditions.slice(0, 2) } } },
      mergePatch,
    );
  });

  it('keeps spec and status apart through the status subresource', async () => {
    await createRequest('wl-cp-4');
    // A /status write changes status only (apiextensions statusStrategy.PrepareForUpdate)...
    const viaStatus = (await custom.patchNamespacedCustomObjectStatus(
      { ...REQUESTS, name: 'wl-cp-4', body: { spec: { reason: 'changed' }, status: { phase: 'Pending' } } },
      mergePatch,
    )) as Stored;
    expect([viaStatus.spec, viaStatus.status, viaStatus.metadata.generation]).toEqual([{ reason: 'MHC: NodeReady False' }, { phase: 'Pending' }, 1]);
    // ...and a write to the main resource changes everything but status.
    const viaMain = (await custom.patchNamespacedCustomObject(
      { ...REQUESTS, name: 'wl-cp-4', body: { spec: { reason: 'changed' }, status: { phase: 'NotAPhase' } } },
      mergePatch,
    )) as Stored;
    expect([viaMain.spec, viaMain.status, viaMain.metadata.generation]).toEqual([{ reason: 'changed' }, { phase: 'Pending' }, 2]);
  });

  it('refuses a template without spec.template (required), and with fieldValidation=Strict refuses unknown fields', async () => {
    expect(
      await failureOf(
        custom.createNamespacedCustomObject({
          ...TEMPLATES,
          body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'EtcdRemediationRequestTemplate', metadata: { name: 't' }, spec: {} },
        }),
      ),
    ).toEqual(
      invalid('EtcdRemediationRequestTemplate', 't', 'spec.template: Required value', [
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.template' },
      ]),
    );
    const strict = await failureOf(
      custom.createNamespacedCustomObject({
        ...REQUESTS,
        fieldValidation: 'Strict',
        body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'EtcdRemediationRequest', metadata: { name: 'wl-cp-5' }, spec: { paths: [] } },
      }),
    );
    expect(strict).toEqual({
      code: 400,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'EtcdRemediationRequest in version "v1alpha1" cannot be handled as a EtcdRemediationRequest: strict decoding error: unknown field "spec.paths"',
        reason: 'BadRequest',
        code: 400,
      },
    });
    // The template's labels are a map of strings (additionalProperties): kept whole, not pruned.
    const template = (await custom.createNamespacedCustomObject({
      ...TEMPLATES,
      body: {
        apiVersion: `${GROUP}/v1alpha1`,
        kind: 'EtcdRemediationRequestTemplate',
        metadata: { name: 't' },
        spec: { template: { metadata: { labels: { a: 'b' } }, spec: {}, extra: 1 } },
      },
    })) as Stored;
    expect(template.spec).toEqual({ template: { metadata: { labels: { a: 'b' } }, spec: {} } });
  });
});
