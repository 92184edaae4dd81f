// The README's deploy step, `kubectl apply -k infra/kubernetes/deploy`, with the real kubectl
// against the kube fake (test/support/fakes/kube): every object of the base is created and nothing
// is refused; a second apply changes nothing; a change is applied as a strategic merge patch and
// the base puts it back. And the bug the base fixed: deployment.yaml alone, without its Namespace,
// fails as on a real cluster (NamespaceLifecycle: `namespaces "etcd-remediator-system" not found`).
//
// What kubectl asks (read from the fake's request log and `-v=6`): discovery (/api, /apis, each
// group-version), /openapi/v3 and the document of each group-version it writes to, where the
// PATCH operation's fieldValidation parameter tells it the server validates fields: it then sends
// ?fieldValidation=Strict (its --validate=strict default) on every write and validates nothing
// itself. 1.27 and 1.28 also read /openapi/v2 (protobuf) before anything else; from 1.29 it is read
// only when a patch is computed. Then, per object: GET (404), POST with the
// kubectl.kubernetes.io/last-applied-configuration annotation; on an apply of what exists, GET and
// a three-way patch, not sent when empty ("unchanged"): a strategic merge patch for the built-in
// types, a merge patch for the CRDs (apiextensions is not in kubectl's scheme).
//
// The machine's Cloud SDK ships one kubectl per minor (kubectl.1.27 … kubectl.1.33): the oldest and
// the newest run here; KUBECTL_BIN names another.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { isObject, text, type Json, type JsonObject } from '../../support/fakes/kube/patch.ts';
import { RESOURCES, metadataOf, resourceType, type ResourceType } from '../../support/fakes/kube/store.ts';
import { installedKubectls, type KubectlBin } from '../../support/kubectl-bins.ts';

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '../../..');
const BASE = 'infra/kubernetes/deploy';
const NAMESPACE = 'etcd-remediator-system';

type Kubectl = KubectlBin;

/** The oldest and the newest installed (or KUBECTL_BIN alone). */
function findKubectls(): Kubectl[] {
  const all = installedKubectls();
  return [...new Set([all[0], all.at(-1)].filter((k): k is Kubectl => k !== undefined))];
}

const kubectls = findKubectls();
const SECRETS = resourceType('', 'secrets')!;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl with the fake's kubeconfig and a cache of its own (discovery and OpenAPI are cached per host:port), from the repository root. */
async function kubectl(bin: string, kubeconfig: string, cacheDir: string, ...args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(bin, ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], { cwd: REPO, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

interface Response {
  method: string;
  path: string;
  query: string;
  status: number;
}

/**
 * Every response kubectl logged at -v=6, in client-go's two formats: `GET http://… 200 OK in 3
 * milliseconds` (up to 1.29) and `"Response" verb="GET" url="http://…" status="200 OK"` (from 1.30).
 */
function responsesIn(stderr: string): Response[] {
  const plain = /round_trippers\.go:\d+\] (GET|POST|PUT|PATCH|DELETE) (\S+) (\d{3}) /;
  const structured = /"Response" verb="(\w+)" url="([^"]+)" status="(\d{3})/;
  return stderr.split('\n').flatMap((line) => {
    const match = plain.exec(line) ?? structured.exec(line);
    if (!match) return [];
    const url = new URL(match[2]!);
    return [{ method: match[1]!, path: url.pathname, query: url.search, status: Number(match[3]) }];
  });
}

/**
 * The responses that refused something: any 4xx or 5xx but the GET 404 kubectl's apply makes of an
 * object before it creates it (a POST to the GET's collection in the same run).
 */
function refusals(responses: Response[]): Response[] {
  const posted = new Set(responses.filter((r) => r.method === 'POST' && r.status < 400).map((r) => r.path));
  return responses.filter((r) => r.status >= 400 && !(r.method === 'GET' && r.status === 404 && posted.has(path.posix.dirname(r.path))));
}

function typeOf(manifest: JsonObject): ResourceType {
  const apiVersion = text(manifest.apiVersion);
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
  const type = RESOURCES.find((t) => t.group === group && t.kind === manifest.kind);
  if (!type) throw new Error(`the fake serves no ${text(manifest.kind)} of ${apiVersion}`);
  return type;
}

/** `kind/namespace/name`, as kubectl's output and the store tell objects apart. */
function keyOf(type: ResourceType, object: JsonObject): string {
  const metadata = metadataOf(object);
  return `${type.kind}/${type.namespaced ? text(metadata.namespace) : ''}/${text(metadata.name)}`;
}

/** How kubectl names an object in its output: `deployment.apps/etcd-remediator`. */
const printed = (type: ResourceType, manifest: JsonObject): string =>
  `${type.kind.toLowerCase()}${type.group === '' ? '' : `.${type.group}`}/${text(metadataOf(manifest).name)}`;

/** Every stored object's resourceVersion, by kind/namespace/name. */
function versions(fake: KubeApiFake): Record<string, string> {
  return Object.fromEntries(fake.store.all().map(({ type, object }) => [keyOf(type, object), text(metadataOf(object).resourceVersion)]));
}

const specOf = (object: JsonObject): JsonObject => object.spec as JsonObject;
const podSpecOf = (deployment: JsonObject): JsonObject => (specOf(deployment).template as JsonObject).spec as JsonObject;
const named = (list: Json | undefined): string[] => (Array.isArray(list) ? list.map((item) => (isObject(item) ? text(item.name) : '')) : []);

if (kubectls.length === 0) {
  describe('kubectl apply -k infra/kubernetes/deploy against the kube fake', () => {
    it.skip('needs a kubectl: none found in the Cloud SDK bin folder or beside PATH’s, and KUBECTL_BIN is not set', () => undefined);
  });
}

for (const { bin, minor } of kubectls) {
  describe(`kubectl 1.${minor} apply -k infra/kubernetes/deploy against the kube fake`, () => {
    let dir: string;
    let fake: KubeApiFake;
    let kubeconfig: string;
    /** The base as kubectl renders it (`kubectl kustomize`), in its order. */
    let manifests: JsonObject[];
    const apply = (...args: string[]) => kubectl(bin, kubeconfig, path.join(dir, 'cache'), ...args);

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubectl-apply-deploy-'));
      fake = await startKubeApiFake();
      kubeconfig = fake.writeKubeconfig(path.join(dir, 'kubeconfig'));
      const rendered = await run(bin, ['kustomize', BASE], { cwd: REPO, timeout: 30_000 });
      manifests = (loadAll(rendered.stdout) as Json[]).filter(isObject);
    });

    afterAll(async () => {
      await fake?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('creates every object of the base, the Namespace first, and nothing is refused', async () => {
      expect(manifests.map((m) => m.kind)).toEqual([
        'Namespace',
        'CustomResourceDefinition',
        'CustomResourceDefinition',
        'ServiceAccount',
        'ClusterRole',
        'ClusterRole',
        'ClusterRoleBinding',
        'Service',
        'Deployment',
      ]);
      const mark = fake.requests.length;
      const applied = await apply('-v=6', 'apply', '-k', BASE);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout.trim().split('\n')).toEqual(manifests.map((m) => `${printed(typeOf(m), m)} created`));

      for (const manifest of manifests) {
        const type = typeOf(manifest);
        const metadata = metadataOf(manifest);
        const stored = fake.store.find(type, text(metadata.namespace), text(metadata.name));
        expect(stored, keyOf(type, manifest)).toBeDefined();
        // Stored as kubectl sent it (the fake defaults nothing but a Namespace's status, finalizer and name label)...
        expect(stored).toMatchObject(manifest);
        // ...with what kubectl applied, for the next three-way patch.
        const lastApplied = (metadataOf(stored!).annotations as JsonObject)['kubectl.kubernetes.io/last-applied-configuration'];
        expect(JSON.parse(text(lastApplied))).toMatchObject(manifest);
      }

      const responses = responsesIn(applied.stderr);
      // The log was read: at least one response for each request the fake saw (cached ones are logged too).
      expect(responses.length).toBeGreaterThanOrEqual(fake.requests.length - mark);
      expect(refusals(responses)).toEqual([]);
      const writes = responses.filter((r) => r.method !== 'GET');
      expect(writes.map((r) => [r.method, r.status])).toEqual(manifests.map(() => ['POST', 201]));
      // Validation left to the server: the fake's OpenAPI says each PATCH takes fieldValidation.
      for (const write of writes) expect(new URLSearchParams(write.query).get('fieldValidation')).toBe('Strict');
      expect(responses.filter((r) => r.status === 404)).toHaveLength(manifests.length);
      expect(fake.requests.slice(mark).some((r) => r.path === '/openapi/v3')).toBe(true);
    });

    it('a second apply changes nothing: every object "unchanged", no write, every resourceVersion as it was', async () => {
      const before = versions(fake);
      const mark = fake.requests.length;
      const again = await apply('-v=6', 'apply', '-k', BASE);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim().split('\n')).toEqual(manifests.map((m) => `${printed(typeOf(m), m)} unchanged`));
      expect(fake.requests.slice(mark).filter((r) => r.method !== 'GET')).toEqual([]);
      expect(refusals(responsesIn(again.stderr))).toEqual([]);
      expect(versions(fake)).toEqual(before);
    });

    it("the README's next step, `kubectl create secret generic` (protobuf from kubectl 1.32 on): created as sent", async () => {
      const mark = fake.requests.length;
      const token = 'a3f1c2d4e5b60718293a4b5c6d7e8f90';
      const created = await apply(
        '-n',
        'etcd-remediator-system',
        'create',
        'secret',
        'generic',
        'etcd-remediator-metrics-token',
        `--from-literal=token=${token}`,
      );
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout.trim()).toBe('secret/etcd-remediator-metrics-token created');
      const secret = fake.store.find(SECRETS, 'etcd-remediator-system', 'etcd-remediator-metrics-token');
      expect(secret).toMatchObject({ apiVersion: 'v1', kind: 'Secret', type: 'Opaque', data: { token: Buffer.from(token).toString('base64') } });
      const post = fake.requests.slice(mark).find((r) => r.method === 'POST' && r.path.endsWith('/secrets'));
      expect(post?.contentType).toBe(minor >= 32 ? 'application/vnd.kubernetes.protobuf' : 'application/json');
    });

    it('a changed Deployment and Service go as strategic merge patches, and apply -k puts the base back', async () => {
      const deployment = structuredClone(manifests.find((m) => m.kind === 'Deployment')!);
      const service = structuredClone(manifests.find((m) => m.kind === 'Service')!);
      const pod = podSpecOf(deployment);
      const container = (pod.containers as JsonObject[])[0]!;
      container.image = 'ghcr.io/example/etcd-remediator:0.2.0';
      container.env = [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }];
      container.ports = [...(container.ports as JsonObject[]), { name: 'debug', containerPort: 9229, protocol: 'TCP' }];
      container.volumeMounts = (container.volumeMounts as JsonObject[]).filter((m) => m.name !== 'tmp');
      pod.volumes = (pod.volumes as JsonObject[]).filter((v) => v.name !== 'tmp');
      specOf(deployment).strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } };
      specOf(service).ports = [...(specOf(service).ports as JsonObject[]), { name: 'debug', port: 9229, targetPort: 9229, protocol: 'TCP' }];
      const changed = path.join(dir, 'changed.json');
      fs.writeFileSync(changed, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [deployment, service] }));

      const mark = fake.requests.length;
      const patched = await apply('-v=6', 'apply', '-f', changed);
      expect(patched.code, patched.stderr).toBe(0);
      expect(patched.stdout.trim().split('\n')).toEqual(['deployment.apps/etcd-remediator configured', 'service/etcd-remediator configured']);
      expect(refusals(responsesIn(patched.stderr))).toEqual([]);
      expect(
        fake.requests
          .slice(mark)
          .filter((r) => r.method !== 'GET')
          .map((r) => `${r.method} ${r.path}`),
      ).toEqual([`PATCH /apis/apps/v1/namespaces/${NAMESPACE}/deployments/etcd-remediator`, `PATCH /api/v1/namespaces/${NAMESPACE}/services/etcd-remediator`]);
      // Merged as the Go types say (a merge patch would have replaced the lists with the patch's few items).
      const DEPLOYMENTS = typeOf(deployment);
      const SERVICES = typeOf(service);
      const storedDeployment = fake.store.get(DEPLOYMENTS, NAMESPACE, 'etcd-remediator');
      expect(specOf(storedDeployment)).toEqual(specOf(deployment));
      expect(metadataOf(storedDeployment).generation).toBe(2);
      expect(specOf(fake.store.get(SERVICES, NAMESPACE, 'etcd-remediator'))).toEqual(specOf(service));

      const restored = await apply('-v=6', 'apply', '-k', BASE);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stdout).toContain('deployment.apps/etcd-remediator configured');
      expect(restored.stdout).toContain('service/etcd-remediator configured');
      expect(refusals(responsesIn(restored.stderr))).toEqual([]);
      const original = manifests.find((m) => m.kind === 'Deployment')!;
      const back = fake.store.get(DEPLOYMENTS, NAMESPACE, 'etcd-remediator');
      expect(specOf(back)).toEqual(specOf(original));
      // $setElementOrder put /tmp back where it was, and $retainKeys dropped rollingUpdate.
      expect(named(podSpecOf(back).volumes)).toEqual(named(podSpecOf(original).volumes));
      expect(specOf(fake.store.get(SERVICES, NAMESPACE, 'etcd-remediator'))).toEqual(specOf(manifests.find((m) => m.kind === 'Service')!));
    });

    it('deployment.yaml alone, without its Namespace, is refused as a real cluster refuses it', async () => {
      const empty = await startKubeApiFake();
      try {
        const alone = await kubectl(
          bin,
          empty.writeKubeconfig(path.join(dir, 'kubeconfig-empty')),
          path.join(dir, 'cache'),
          'apply',
          '-f',
          `${BASE}/deployment.yaml`,
        );
        expect(alone.code).toBe(1);
        expect(alone.stderr).toContain(`Error from server (NotFound): error when creating "${BASE}/deployment.yaml": namespaces "${NAMESPACE}" not found`);
        expect(empty.store.list(typeOf({ apiVersion: 'apps/v1', kind: 'Deployment' }), undefined, null)).toEqual([]);
      } finally {
        await empty.stop();
      }
    });
  });
}

describe('the kube fake, for kubectl apply: OpenAPI, patch content types, strict field decoding (over HTTP)', () => {
  let fake: KubeApiFake;
  const DEPLOYMENT: JsonObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1' }] } },
    },
  };
  const DEPLOYMENTS = `/apis/apps/v1/namespaces/default/deployments`;
  const send = (method: string, path: string, body: unknown, contentType = 'application/json') =>
    fetch(`${fake.server}${path}`, { method, headers: { 'Content-Type': contentType }, body: JSON.stringify(body) });

  beforeAll(async () => {
    fake = await startKubeApiFake();
  });

  afterAll(async () => {
    await fake?.stop();
  });

  it('/openapi/v3 indexes a document per group-version; a PATCH there names fieldValidation and the patch types the route takes', async () => {
    const index = (await (await fetch(`${fake.server}/openapi/v3`)).json()) as { paths: Record<string, { serverRelativeURL: string }> };
    expect(Object.keys(index.paths)).toEqual(
      expect.arrayContaining([
        'api/v1',
        'apis/apps/v1',
        'apis/rbac.authorization.k8s.io/v1',
        'apis/apiextensions.k8s.io/v1',
        'apis/etcd-remediator.io/v1alpha1',
      ]),
    );
    const url = index.paths['apis/apps/v1']!.serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
    const answer = await fetch(`${fake.server}${url}`, { headers: { Accept: 'application/json' } });
    expect(answer.headers.get('cache-control')).toBe('public, immutable');
    type Operation = {
      parameters: { name: string; in: string }[];
      requestBody: { content: Record<string, unknown> };
      'x-kubernetes-group-version-kind': unknown;
    };
    const document = (await answer.json()) as { paths: Record<string, { patch?: Operation }> };
    const patch = document.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']!.patch!;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'apps', kind: 'Deployment', version: 'v1' });
    expect(patch.parameters).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query' }));
    expect(Object.keys(patch.requestBody.content)).toContain('application/strategic-merge-patch+json');
    const custom = (await (await fetch(`${fake.server}${index.paths['apis/etcd-remediator.io/v1alpha1']!.serverRelativeURL}`)).json()) as typeof document;
    const customPatch = custom.paths['/apis/etcd-remediator.io/v1alpha1/namespaces/{namespace}/etcdremediationrequests/{name}']!.patch!;
    expect(Object.keys(customPatch.requestBody.content)).toEqual([
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ]);
    // An out-of-date hash is redirected to the current one; a known ETag is answered 304.
    const stale = await fetch(`${fake.server}/openapi/v3/apis/apps/v1?hash=ABC`, { redirect: 'manual' });
    expect([stale.status, stale.headers.get('location')]).toEqual([301, url]);
    const etag = answer.headers.get('etag')!;
    expect((await fetch(`${fake.server}${url}`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
  });

  it('/openapi/v2 in JSON or protobuf, 406 for anything else', async () => {
    const json = await fetch(`${fake.server}/openapi/v2`, { headers: { Accept: 'application/json' } });
    expect(await json.json()).toMatchObject({ swagger: '2.0', info: { title: 'Kubernetes' } });
    const proto = await fetch(`${fake.server}/openapi/v2`, { headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(proto.headers.get('content-type')).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    // Field 1 (swagger), length-delimited: "2.0".
    expect([...new Uint8Array(await proto.arrayBuffer()).slice(0, 5)]).toEqual([0x0a, 3, 0x32, 0x2e, 0x30]);
    expect((await fetch(`${fake.server}/openapi/v2`, { headers: { Accept: 'text/html' } })).status).toBe(406);
  });

  it('strict field decoding of a built-in kind: refused under Strict, dropped with a Warning otherwise', async () => {
    const typo = { ...DEPLOYMENT, spec: { ...(DEPLOYMENT.spec as JsonObject), replica: 2 } };
    const strict = await send('POST', `${DEPLOYMENTS}?fieldValidation=Strict`, typo);
    expect(strict.status).toBe(400);
    expect(await strict.json()).toMatchObject({
      reason: 'BadRequest',
      message: 'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replica"',
    });
    const warned = await send('POST', DEPLOYMENTS, typo);
    expect(warned.status).toBe(201);
    expect(warned.headers.get('warning')).toBe('299 - "unknown field \\"spec.replica\\""');
    expect(specOf((await warned.json()) as JsonObject)).not.toHaveProperty('replica');
  });

  it('PATCH: a strategic merge patch merges a built-in kind; refused (415) for a custom resource; server-side apply and protobuf bodies refused as not modelled', async () => {
    const merged = await send(
      'PATCH',
      `${DEPLOYMENTS}/web?fieldValidation=Strict`,
      { spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'busybox:1' }] } } } },
      'application/strategic-merge-patch+json',
    );
    expect(merged.status).toBe(200);
    // Merged by name; without a $setElementOrder the patch's items come first (strategicpatch mergeSortedSlice).
    expect(named(podSpecOf((await merged.json()) as JsonObject).containers)).toEqual(['sidecar', 'web']);
    const unknown = await send('PATCH', `${DEPLOYMENTS}/web?fieldValidation=Strict`, { spec: { replica: 2 } }, 'application/strategic-merge-patch+json');
    expect(unknown.status).toBe(422);
    expect(((await unknown.json()) as { message: string }).message).toBe(
      ' "" is invalid: patch: Invalid value: "map[spec:map[replica:2]]": strict decoding error: unknown field "spec.replica"',
    );
    const request = '/apis/etcd-remediator.io/v1alpha1/namespaces/default/etcdremediationrequests/x';
    const custom = await send('PATCH', request, { spec: {} }, 'application/strategic-merge-patch+json');
    expect(custom.status).toBe(415);
    expect(await custom.json()).toMatchObject({
      reason: 'UnsupportedMediaType',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    });
    // kubectl ≥ 1.32's typed clients write protobuf: read for Secrets, ConfigMaps and Namespaces
    // (protobuf-body.ts); an envelope naming no kind is no object, another kind is not modelled.
    const protobuf = (envelope: number[]) =>
      fetch(`${fake.server}/api/v1/namespaces/default/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
        body: new Uint8Array([0x6b, 0x38, 0x73, 0x00, ...envelope]),
      });
    const empty = await protobuf([]);
    expect([empty.status, ((await empty.json()) as { message: string }).message]).toEqual([
      400,
      'the body of the request was in an unknown format: the protobuf envelope names no apiVersion and kind',
    ]);
    // runtime.Unknown{typeMeta: {apiVersion: "v1", kind: "Pod"}}
    const pod = await protobuf([0x0a, 0x09, 0x0a, 0x02, ...Buffer.from('v1'), 0x12, 0x03, ...Buffer.from('Pod')]);
    expect([pod.status, ((await pod.json()) as { message: string }).message]).toEqual([
      415,
      'protobuf bodies of v1/Pod are not modelled by the kube fake (only v1/Secret, v1/ConfigMap, v1/Namespace)',
    ]);
    const applied = await send('PATCH', `${DEPLOYMENTS}/web`, {}, 'application/apply-patch+yaml');
    expect([applied.status, ((await applied.json()) as { message: string }).message]).toEqual([
      415,
      'server-side apply (application/apply-patch+yaml) is not modelled by the kube fake',
    ]);
  });
});
