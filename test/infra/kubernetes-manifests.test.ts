// The Kubernetes manifests under infra/kubernetes/, checked without a cluster: parsed with
// client-node's loadAllYaml, our CRDs held to the API server's structural-schema rules, objects
// validated against the CRD schemas with ajv, the example MachineHealthChecks against Cluster API's
// own MachineHealthCheck schema (vendored in test/fixtures/capi/), and the RBAC and Deployment
// against what the watcher and Cluster API need.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  dumpYaml,
  loadAllYaml,
  type KubernetesObject,
  type V1ClusterRole,
  type V1CustomResourceDefinition,
  type V1Deployment,
  type V1PolicyRule,
  type V1Role,
  type V1RoleBinding,
  type V1ServiceAccount,
} from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { pruneUnknownFields, type Schema, schemaAt, structuralProblems, validatorFor, walkSchema } from './crd-schema.ts';
import { kubeCalls, unreadApiClasses, type Side } from './kube-calls.ts';
import { testIncidentId } from '../support/incident-ids.ts';

const ROOT = path.resolve(import.meta.dirname, '../../infra/kubernetes');
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/capi');
const GROUP = 'etcd-remediator.io';

interface Doc {
  file: string;
  /** As client-node's loadAllYaml gives it: built-in kinds as typed models. */
  typed: KubernetesObject;
  /** The same document as plain YAML data, field names as written. */
  raw: Schema;
}

/** The manifests; not Kustomize's own kustomization.yaml files, which test/infra/kustomize.test.ts renders. */
function yamlFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? yamlFiles(path.join(dir, entry.name))
        : /\.ya?ml$/.test(entry.name) && entry.name !== 'kustomization.yaml'
          ? [path.join(dir, entry.name)]
          : [],
    )
    .sort();
}

const docs: Doc[] = yamlFiles(ROOT).flatMap((file) => {
  const text = fs.readFileSync(file, 'utf8');
  const typed = loadAllYaml(text) as KubernetesObject[];
  const raw = loadAll(text) as Schema[];
  return typed.map((object, i) => ({ file: path.relative(ROOT, file), typed: object, raw: raw[i]! }));
});

const inFile = (file: string) => docs.filter((doc) => doc.file === file);
const ofKind = <T extends KubernetesObject>(kind: string, file?: string) =>
  docs.filter((doc) => doc.typed.kind === kind && (file === undefined || doc.file === file)).map((doc) => doc.typed as T);
const one = <T>(list: T[], what: string): T => {
  expect(list, what).toHaveLength(1);
  return list[0]!;
};

const crds = docs.filter((doc) => doc.typed.kind === 'CustomResourceDefinition');
const crdNamed = (kind: string) =>
  one(
    crds.filter((doc) => (doc.typed as V1CustomResourceDefinition).spec.names.kind === kind),
    `the ${kind} CRD`,
  );
const REQUEST = crdNamed('EtcdRemediationRequest');
const TEMPLATE = crdNamed('EtcdRemediationRequestTemplate');

/**
 * The openAPIV3Schema of a CRD's only version, in wire form. Read from the raw document: client-node's
 * typed V1JSONSchemaProps renames `enum` to `_enum` and `x-kubernetes-*` to `x_kubernetes_*`, but
 * only where its model is typed; `items` and `additionalProperties` are `any` and keep the wire names.
 */
function schemaOf(crd: Doc): Schema {
  const versions = (crd.raw.spec as { versions: { schema: { openAPIV3Schema: Schema } }[] }).versions;
  return one(versions, `${crd.file}: versions`).schema.openAPIV3Schema;
}

const readFixture = (version: string) => JSON.parse(fs.readFileSync(path.join(FIXTURES, `machinehealthchecks.${version}.schema.json`), 'utf8')) as Schema;

const validateRequest = validatorFor(schemaOf(REQUEST));
const validateTemplate = validatorFor(schemaOf(TEMPLATE));

/** instancePath and keyword of each error, e.g. `/spec/reason maxLength`. */
const errorsOf = (errors: ReturnType<typeof validateRequest>) => errors.map((error) => `${error.instancePath} ${error.keyword}`);

/** The fields refused as unknown, named as the API server names them (`spec.paths`, `status.conditions[0].x`). */
const unknownFieldsOf = (errors: ReturnType<typeof validateRequest>) =>
  errors
    .filter((error) => error.keyword === 'additionalProperties')
    .map((error) =>
      `${error.instancePath}/${String(error.params.additionalProperty)}`
        .split('/')
        .slice(1)
        .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
        .join(''),
    );

describe('infra/kubernetes: every file', () => {
  it('is found and parses with client-node loadAllYaml', () => {
    expect(new Set(docs.map((doc) => doc.file))).toEqual(
      new Set([
        'deploy/components/service-monitor/service-monitor.yaml',
        'deploy/crds/etcd-remediator.io_etcdremediationrequests.yaml',
        'deploy/crds/etcd-remediator.io_etcdremediationrequesttemplates.yaml',
        'deploy/deployment.yaml',
        'deploy/namespace.yaml',
        'deploy/rbac.yaml',
        'deploy/service.yaml',
        'example/machinehealthcheck-v1beta2.yaml',
        'example/machinehealthcheck.yaml',
        'workload-rbac.yaml',
      ]),
    );
    for (const doc of docs) expect(doc.typed.apiVersion && doc.typed.kind && doc.typed.metadata?.name, doc.file).toBeTruthy();
  });

  it('has no field client-node does not know: every object survives its typed round trip unchanged', () => {
    // loadAllYaml drops fields its typed model lacks (a misspelled `readOnlyRootFileSystem` would
    // vanish silently); dumping the typed object back must give the document as written.
    for (const doc of docs) expect(loadAll(dumpYaml(doc.typed))[0], `${doc.file} ${doc.typed.kind}/${doc.typed.metadata?.name}`).toEqual(doc.raw);
  });
});

describe('infra/kubernetes/deploy/crds', () => {
  it.each(crds.map((doc) => [doc.file, doc] as const))('%s: names, group, scope and version agree', (file, doc) => {
    const crd = doc.typed as V1CustomResourceDefinition;
    const { names } = crd.spec;
    expect(crd.spec.group).toBe(GROUP);
    expect(crd.metadata?.name).toBe(`${names.plural}.${crd.spec.group}`);
    expect(path.basename(file)).toBe(`${GROUP}_${names.plural}.yaml`);
    expect(names.plural).toBe(`${names.kind.toLowerCase()}s`);
    expect(names.singular).toBe(names.kind.toLowerCase());
    expect(names.listKind).toBe(`${names.kind}List`);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([['v1alpha1', true, true]]);
  });

  it.each(crds.map((doc) => [doc.file, doc] as const))('%s: the schema is structural', (_file, doc) => {
    expect(structuralProblems(schemaOf(doc))).toEqual([]);
  });

  it.each(crds.map((doc) => [doc.file, doc] as const))('%s: Cluster API contract labels name served versions', (_file, doc) => {
    const crd = doc.typed as V1CustomResourceDefinition;
    const served = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
    // "cluster.x-k8s.io/<contract>: <version>[_<version>…]" (Cluster API internal/contract/version.go).
    for (const contract of ['v1beta1', 'v1beta2']) {
      const value = crd.metadata?.labels?.[`cluster.x-k8s.io/${contract}`];
      expect(value, contract).toBeDefined();
      for (const version of value!.split('_')) expect(served).toContain(version);
    }
  });

  it.each(crds.map((doc) => [doc.file, doc] as const))('%s: every printer column names a field of the schema, of its type', (_file, doc) => {
    const crd = doc.typed as V1CustomResourceDefinition;
    const schema = schemaOf(doc);
    const columns = crd.spec.versions[0]!.additionalPrinterColumns ?? [];
    expect(columns.length).toBeGreaterThan(0);
    for (const column of columns) {
      if (column.jsonPath === '.metadata.creationTimestamp') {
        expect(column.type).toBe('date');
        continue;
      }
      const field = schemaAt(schema, column.jsonPath);
      expect(field, `${column.name}: ${column.jsonPath}`).toBeDefined();
      expect(column.type === 'date' ? `${String(field!.type)}/${String(field!.format)}` : field!.type, column.name).toBe(
        column.type === 'date' ? 'string/date-time' : column.type,
      );
    }
  });

  it('the request: status subresource, the columns asked for, and its status fields', () => {
    const version = (REQUEST.typed as V1CustomResourceDefinition).spec.versions[0]!;
    expect(version.subresources?.status).toEqual({});
    expect(version.additionalPrinterColumns?.filter((c) => !c.priority).map((c) => [c.name, c.jsonPath])).toEqual([
      ['Phase', '.status.phase'],
      ['Reason', '.status.reasonCode'],
      ['Incident', '.status.incidentId'],
      ['Age', '.metadata.creationTimestamp'],
    ]);
    const status = schemaAt(schemaOf(REQUEST), '.status')!;
    expect(Object.keys(status.properties as Schema).sort()).toEqual(
      ['completedAt', 'conditions', 'incidentId', 'leaderMove', 'message', 'observedGeneration', 'phase', 'reasonCode', 'startedAt', 'updatedAt'].sort(),
    );
    expect(schemaAt(schemaOf(REQUEST), '.status.phase')!.enum).toEqual([
      'Pending',
      'Running',
      'Waiting',
      'AwaitingReplacement',
      'Completed',
      'Blocked',
      'Failed',
      'Cancelled',
      'Recovered',
    ]);
    const conditions = schemaAt(schemaOf(REQUEST), '.status.conditions')!;
    expect(conditions).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });
    // The list-map key must be required (apiextensions validation), as in metav1.Condition.
    expect((conditions.items as Schema).required).toEqual(expect.arrayContaining(['type', 'status', 'reason', 'message', 'lastTransitionTime']));
  });

  it('the template: Cluster API derives the request kind by trimming "Template", and spec.template.spec is the request spec', () => {
    const request = REQUEST.typed as V1CustomResourceDefinition;
    const template = TEMPLATE.typed as V1CustomResourceDefinition;
    // clusterv1.TemplateSuffix, strings.TrimSuffix in controllers/external/util.go GenerateTemplate.
    expect(template.spec.names.kind).toBe(`${request.spec.names.kind}Template`);
    expect(template.spec.group).toBe(request.spec.group);
    expect(template.spec.versions.map((v) => v.name)).toEqual(request.spec.versions.map((v) => v.name));
    expect(schemaAt(schemaOf(TEMPLATE), '.spec.template.spec')).toEqual(schemaAt(schemaOf(REQUEST), '.spec'));
  });
});

const NOW = '2026-11-30T12:00:00Z';
const validRequest = {
  apiVersion: `${GROUP}/v1alpha1`,
  kind: 'EtcdRemediationRequest',
  metadata: {
    name: 'wl-cp-2',
    namespace: 'default',
    ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: 'wl-cp-2', uid: 'u-1' }],
  },
  spec: { reason: 'Node not Ready for 5m' },
  status: {
    phase: 'Completed',
    reasonCode: 'LEADER_UNREACHABLE_PAST_GRACE',
    message: 'leader removed without a move',
    incidentId: testIncidentId(1),
    leaderMove: 'skipped',
    startedAt: NOW,
    updatedAt: NOW,
    completedAt: NOW,
    observedGeneration: 1,
    conditions: [{ type: 'Ready', status: 'True', reason: 'MemberRemoved', message: '', lastTransitionTime: NOW, observedGeneration: 1 }],
  },
};

describe('objects against the CRD schemas (ajv)', () => {
  it('accepts a complete request, an empty one, and a request as Cluster API creates it from the example template', () => {
    expect(validateRequest(validRequest)).toEqual([]);
    expect(validateRequest({ apiVersion: `${GROUP}/v1alpha1`, kind: 'EtcdRemediationRequest', metadata: { name: 'm' } })).toEqual([]);
    for (const doc of docs.filter((d) => d.typed.kind === 'EtcdRemediationRequestTemplate')) {
      const spec = (doc.raw as { spec: { template: { spec: unknown } } }).spec.template.spec;
      expect(validateRequest({ ...validRequest, spec, status: undefined }), doc.file).toEqual([]);
    }
  });

  it('accepts every template shipped (the examples)', () => {
    const templates = docs.filter((d) => d.typed.kind === 'EtcdRemediationRequestTemplate');
    expect(templates.length).toBeGreaterThan(0);
    for (const doc of templates) {
      expect(doc.typed.apiVersion, doc.file).toBe(`${GROUP}/v1alpha1`);
      expect(validateTemplate(doc.raw), doc.file).toEqual([]);
    }
  });

  const withSpec = (spec: unknown) => ({ ...validRequest, spec });
  const withStatus = (status: Record<string, unknown>) => ({ ...validRequest, status: { ...validRequest.status, ...status } });
  it.each([
    ['a reason over 1024 characters', withSpec({ reason: 'x'.repeat(1025) }), '/spec/reason maxLength'],
    ['a reason that is not a string', withSpec({ reason: 42 }), '/spec/reason type'],
    ['a reason as a list', withSpec({ reason: ['Node not Ready'] }), '/spec/reason type'],
    ['a spec that is not an object', withSpec('Node not Ready'), '/spec type'],
    ['a misspelled spec field', withSpec({ reasons: 'Node not Ready' }), '/spec additionalProperties'],
    ['paths, which a request no longer carries', withSpec({ reason: 'x', paths: ['direct'] }), '/spec additionalProperties'],
    ['dryRun, which a request no longer carries', withSpec({ reason: 'x', dryRun: true }), '/spec additionalProperties'],
    ['an unknown phase', withStatus({ phase: 'Done' }), '/status/phase enum'],
    ['an incident id that is not a UUID', withStatus({ incidentId: '../x' }), '/status/incidentId pattern'],
    ['a time that is not RFC 3339', withStatus({ startedAt: 'yesterday' }), '/status/startedAt format'],
    ['a fractional observedGeneration', withStatus({ observedGeneration: 1.5 }), '/status/observedGeneration type'],
    [
      'a condition status outside True/False/Unknown',
      withStatus({ conditions: [{ ...validRequest.status.conditions[0], status: 'Maybe' }] }),
      '/status/conditions/0/status enum',
    ],
    [
      'a condition without a reason',
      withStatus({ conditions: [{ type: 'Ready', status: 'True', message: '', lastTransitionTime: NOW }] }),
      '/status/conditions/0 required',
    ],
  ])('rejects %s, naming the field', (_what, object, expected) => {
    expect(errorsOf(validateRequest(object))).toContain(expected);
  });

  it('takes a reason of exactly 1024 characters', () => {
    expect(validateRequest(withSpec({ reason: 'x'.repeat(1024) }))).toEqual([]);
  });

  it('rejects a template whose spec.template.spec is wrong, naming the field', () => {
    const template = {
      apiVersion: `${GROUP}/v1alpha1`,
      kind: 'EtcdRemediationRequestTemplate',
      metadata: { name: 't' },
      spec: { template: { spec: { reason: 7 } } },
    };
    expect(errorsOf(validateTemplate(template))).toEqual(['/spec/template/spec/reason type']);
    expect(errorsOf(validateTemplate({ ...template, spec: { template: { spec: { reason: 'x'.repeat(1025) } } } }))).toEqual([
      '/spec/template/spec/reason maxLength',
    ]);
    expect(unknownFieldsOf(validateTemplate({ ...template, spec: { template: { spec: { reason: 'x', dryRun: true } } } }))).toEqual([
      'spec.template.spec.dryRun',
    ]);
    expect(errorsOf(validateTemplate({ ...template, spec: {} }))).toEqual(['/spec required']);
  });

  it('unknown spec fields (the paths and dryRun requests no longer carry): refused under Strict, pruned otherwise, never kept', () => {
    // Neither spec schema keeps unknown fields, so none can reach the watcher. (A structural schema
    // may not say `additionalProperties: false`; leaving out x-kubernetes-preserve-unknown-fields is how.)
    for (const at of ['.spec', '.spec.template.spec'] as const) {
      const spec = schemaAt(schemaOf(at === '.spec' ? REQUEST : TEMPLATE), at)!;
      expect(Object.keys(spec.properties as Schema), at).toEqual(['reason']);
      for (const [where, node] of walkSchema(spec)) expect(node['x-kubernetes-preserve-unknown-fields'], `${at}${where}`).toBeUndefined();
    }

    const legacySpec = { reason: 'Node not Ready for 5m', paths: ['direct', 'exec-relay'], dryRun: true };
    const request = withSpec(legacySpec);
    const template = {
      apiVersion: `${GROUP}/v1alpha1`,
      kind: 'EtcdRemediationRequestTemplate',
      metadata: { name: 't', namespace: 'default' },
      spec: { template: { spec: legacySpec } },
    };

    // Strict field validation (kubectl apply's default, --validate=strict): refused, naming each field.
    expect(unknownFieldsOf(validateRequest(request))).toEqual(['spec.paths', 'spec.dryRun']);
    expect(unknownFieldsOf(validateTemplate(template))).toEqual(['spec.template.spec.paths', 'spec.template.spec.dryRun']);

    // Otherwise (Ignore, or Warn: the default, and what Cluster API's MHC gets when it creates a
    // request), and on reading objects stored before this schema: pruned to the reason, silently
    // but for a warning. What remains is valid, and the same fields the strict path names.
    const prunedRequest = pruneUnknownFields(schemaOf(REQUEST), request);
    expect(prunedRequest.unknown).toEqual(unknownFieldsOf(validateRequest(request)));
    expect(prunedRequest.pruned).toEqual({ ...validRequest, spec: { reason: legacySpec.reason } });
    expect(validateRequest(prunedRequest.pruned)).toEqual([]);

    const prunedTemplate = pruneUnknownFields(schemaOf(TEMPLATE), template);
    expect(prunedTemplate.unknown).toEqual(unknownFieldsOf(validateTemplate(template)));
    expect(prunedTemplate.pruned).toEqual({ ...template, spec: { template: { spec: { reason: legacySpec.reason } } } });
    // So a request Cluster API clones from an old template carries the reason alone.
    expect(validateRequest({ ...validRequest, spec: (prunedTemplate.pruned as typeof template).spec.template.spec, status: undefined })).toEqual([]);

    // The model prunes nothing a valid object has.
    expect(pruneUnknownFields(schemaOf(REQUEST), validRequest)).toEqual({ pruned: validRequest, unknown: [] });
  });
});

describe("infra/kubernetes/example: MachineHealthChecks against Cluster API's own schema", () => {
  const cases = [
    ['v1beta1', 'example/machinehealthcheck.yaml'],
    ['v1beta2', 'example/machinehealthcheck-v1beta2.yaml'],
  ] as const;
  const validators = Object.fromEntries(cases.map(([version]) => [version, validatorFor(readFixture(version))]));
  const mhcIn = (file: string) =>
    one(
      inFile(file).filter((doc) => doc.typed.kind === 'MachineHealthCheck'),
      `${file}: the MHC`,
    );

  it('the vendored schemas name their source', () => {
    for (const [version] of cases)
      expect(readFixture(version).$comment).toMatch(
        /kubernetes-sigs\/cluster-api .*commit [0-9a-f]{40}.*config\/crd\/bases\/cluster\.x-k8s\.io_machinehealthchecks\.yaml/,
      );
  });

  it.each(cases)('%s: %s validates', (version, file) => {
    const mhc = mhcIn(file);
    expect(mhc.typed.apiVersion).toBe(`cluster.x-k8s.io/${version}`);
    expect(validators[version]!(mhc.raw)).toEqual([]);
  });

  it("the schemas are not vacuous: each version refuses the other's layout and a misspelled field", () => {
    const v1beta1 = mhcIn('example/machinehealthcheck.yaml').raw;
    const v1beta2 = mhcIn('example/machinehealthcheck-v1beta2.yaml').raw;
    expect(errorsOf(validators.v1beta1!(v1beta2))).toEqual(expect.arrayContaining(['/spec additionalProperties']));
    expect(errorsOf(validators.v1beta2!(v1beta1))).toEqual(expect.arrayContaining(['/spec additionalProperties']));
    const spec = v1beta2.spec as Schema;
    const noApiVersion = { ...v1beta2, spec: { ...spec, remediation: { templateRef: { kind: 'EtcdRemediationRequestTemplate', name: 'etcd-remediator' } } } };
    expect(errorsOf(validators.v1beta2!(noApiVersion))).toEqual(['/spec/remediation/templateRef required']);
  });

  it.each(cases)('%s: %s selects control-plane Machines and names the template shipped beside it', (version, file) => {
    const mhc = mhcIn(file).raw as {
      metadata: { namespace: string };
      spec: { selector: { matchLabels: Record<string, string> }; remediationTemplate?: Schema; remediation?: { templateRef: Schema } };
    };
    expect(mhc.spec.selector.matchLabels).toEqual({ 'cluster.x-k8s.io/control-plane': '' });
    const ref = version === 'v1beta1' ? mhc.spec.remediationTemplate : mhc.spec.remediation?.templateRef;
    const crd = TEMPLATE.typed as V1CustomResourceDefinition;
    const served = crd.spec.versions.filter((v) => v.served).map((v) => `${crd.spec.group}/${v.name}`);
    expect(served).toContain(ref?.apiVersion);
    expect(ref?.kind).toBe(crd.spec.names.kind);
    // MHC reads the template in its own namespace (TemplateRef.ToObjectReference(m.Namespace)).
    const template = one(
      ofKind(crd.spec.names.kind, file).filter((t) => t.metadata?.name === ref?.name),
      `${file}: the template ${String(ref?.name)}`,
    );
    expect(template.metadata?.namespace).toBe(mhc.metadata.namespace);
  });
});

/** Whether the rules grant `verb` on `resource` (e.g. `pods/exec`) in `group`. */
function allows(rules: V1PolicyRule[] | undefined, group: string, resource: string, verb: string): boolean {
  return (rules ?? []).some((rule) => (rule.apiGroups ?? []).includes(group) && (rule.resources ?? []).includes(resource) && rule.verbs.includes(verb));
}

const expectGrants = (rules: V1PolicyRule[] | undefined, group: string, resource: string, verbs: string[]) => {
  for (const verb of verbs) expect(allows(rules, group, resource, verb), `${verb} ${resource}.${group}`).toBe(true);
};

describe('infra/kubernetes RBAC', () => {
  const roleIn = (file: string, name: string) =>
    one(
      ofKind<V1ClusterRole>('ClusterRole', file).filter((role) => role.metadata?.name === name),
      `${file}: ClusterRole ${name}`,
    );

  /** `group/resource verb` for each grant; a rule with a wildcard is refused (exactly what the code calls). */
  const triples = (rules: V1PolicyRule[] | undefined): string[] =>
    (rules ?? []).flatMap((rule) => {
      for (const list of [rule.apiGroups ?? [], rule.resources ?? [], rule.verbs]) expect(list, 'no wildcard in our rules').not.toContain('*');
      expect(rule.resourceNames, 'resourceNames: names vary per cluster').toBeUndefined();
      return (rule.apiGroups ?? []).flatMap((group) => (rule.resources ?? []).flatMap((resource) => rule.verbs.map((verb) => `${group}/${resource} ${verb}`)));
    });
  const calls = kubeCalls();
  const calledOn = (side: Side) =>
    [...new Set(calls.filter((c) => c.side === side).flatMap((c) => c.grants.map((g) => `${g.group}/${g.resource} ${g.verb}`)))].sort();
  const whoCalls = (grant: string) => calls.filter((c) => c.grants.some((g) => `${g.group}/${g.resource} ${g.verb}` === grant)).map((c) => `${c.at} ${c.call}`);

  it('the call finder sees the calls it must (it is not blind), and only client-node APIs it reads', () => {
    const seen = calls.map((c) => `${c.at.replace(/:\d+$/, '')} ${c.call}`);
    for (const expected of [
      'functions/adapters/kube/cluster-api/cluster-access.ts readNamespacedSecret',
      'functions/adapters/kube/workload.ts listNode',
      'functions/adapters/kube/workload.ts listNamespacedPod',
      'functions/adapters/kube/cluster-api/machine-actuator.ts deleteNamespacedCustomObject',
      'infra/kubernetes/request-watcher.ts makeInformer',
      'functions/adapters/kube/streams/pod-streams-client.ts new Exec',
      'functions/adapters/kube/port-forward/pod-forward.ts new PortForward',
    ])
      expect(seen).toContain(expected);
    expect(unreadApiClasses(), 'API classes the call finder does not read (test/infra/kube-calls.ts)').toEqual([]);
  });

  it.each([
    ['management', 'deploy/rbac.yaml: ClusterRole etcd-remediator', () => triples(roleIn('deploy/rbac.yaml', 'etcd-remediator').rules)],
    [
      'workload',
      'workload-rbac.yaml: Role and ClusterRole etcd-remediator',
      () =>
        triples(
          [...ofKind<V1Role>('Role', 'workload-rbac.yaml'), ...ofKind<V1ClusterRole>('ClusterRole', 'workload-rbac.yaml')].flatMap((role) => role.rules ?? []),
        ),
    ],
  ] as const)('%s cluster: %s grant exactly what the code calls there, nothing missing and nothing more', (side, _where, granted) => {
    const needed = calledOn(side);
    const rules = [...new Set(granted())].sort();
    const missing = needed.filter((grant) => !rules.includes(grant)).map((grant) => `${grant} (${whoCalls(grant).join(', ')})`);
    const extra = rules.filter((grant) => !needed.includes(grant));
    expect(missing, 'called, but not granted').toEqual([]);
    expect(extra, 'granted, but no call needs it').toEqual([]);
  });

  it('secrets: get alone, and only in the management cluster (<cluster>-kubeconfig, <cluster>-etcd)', () => {
    expect(calledOn('management').filter((grant) => grant.startsWith('/secrets '))).toEqual(['/secrets get']);
    expect(calledOn('workload').filter((grant) => grant.startsWith('/secrets '))).toEqual([]);
    expect(allows(roleIn('deploy/rbac.yaml', 'etcd-remediator').rules, GROUP, 'etcdremediationrequests', 'create'), 'only Cluster API creates requests').toBe(
      false,
    );
  });

  it("Cluster API's manager gets what MHC needs on our types, through its aggregation label", () => {
    const role = roleIn('deploy/rbac.yaml', 'capi-etcd-remediator');
    expect(role.metadata?.labels?.['cluster.x-k8s.io/aggregate-to-manager']).toBe('true');
    expectGrants(role.rules, GROUP, 'etcdremediationrequests', ['create', 'get', 'list', 'watch', 'delete']);
    expectGrants(role.rules, GROUP, 'etcdremediationrequesttemplates', ['get', 'list', 'watch']);
  });

  it('every rule on our group names a resource the CRDs serve', () => {
    const served = new Set(
      crds.flatMap((doc) => {
        const crd = doc.typed as V1CustomResourceDefinition;
        const plural = crd.spec.names.plural;
        return crd.spec.versions.some((v) => v.subresources?.status) ? [plural, `${plural}/status`] : [plural];
      }),
    );
    const roles = [...ofKind<V1ClusterRole>('ClusterRole'), ...ofKind<V1Role>('Role')];
    for (const rule of roles.flatMap((role) => role.rules ?? []).filter((r) => r.apiGroups?.includes(GROUP)))
      for (const resource of rule.resources ?? []) expect(served).toContain(resource);
  });

  it('workload cluster: the pods and their exec and port-forward in kube-system (a Role), the Nodes cluster-wide', () => {
    // A WebSocket exec/port-forward is authorised as `get`; since Kubernetes 1.35 also as `create`
    // (AuthorizePodWebsocketUpgradeCreatePermission; kube-paths.md §0.4).
    const role = one(
      ofKind<V1Role>('Role', 'workload-rbac.yaml').filter((r) => r.metadata?.name === 'etcd-remediator'),
      'the workload Role',
    );
    expect(role.metadata?.namespace).toBe('kube-system');
    expectGrants(role.rules, '', 'pods/exec', ['get', 'create']);
    expectGrants(role.rules, '', 'pods/portforward', ['get', 'create']);
    expect(
      triples(role.rules).some((grant) => grant.startsWith('/nodes')),
      'Nodes are cluster-scoped: not in a Role',
    ).toBe(false);
    expectGrants(roleIn('workload-rbac.yaml', 'etcd-remediator').rules, '', 'nodes', ['list']);
  });

  it("workload cluster: the Events of run and remediate on a Node, created and counted again (patch) in default only, where a cluster-scoped object's Events go", () => {
    const role = one(
      ofKind<V1Role>('Role', 'workload-rbac.yaml').filter((r) => r.metadata?.name === 'etcd-remediator-events'),
      'the workload events Role',
    );
    expect(role.metadata?.namespace).toBe('default');
    expect(triples(role.rules)).toEqual(['/events create', '/events patch']);
    expect(
      ofKind<V1RoleBinding>('RoleBinding', 'workload-rbac.yaml').some(
        (b) => b.roleRef.name === 'etcd-remediator-events' && b.metadata?.namespace === 'default',
      ),
    ).toBe(true);
  });

  it('workload cluster: a long-lived token of its ServiceAccount, for the kubeconfig --workload-kubeconfig-secret names', () => {
    const secret = one(
      docs.filter((doc) => doc.file === 'workload-rbac.yaml' && doc.typed.kind === 'Secret'),
      'the token Secret',
    ).raw as { type: string; metadata: { namespace: string; annotations: Record<string, string> } };
    const account = one(ofKind<V1ServiceAccount>('ServiceAccount', 'workload-rbac.yaml'), 'the workload ServiceAccount');
    expect(secret.type).toBe('kubernetes.io/service-account-token');
    expect(secret.metadata.namespace).toBe(account.metadata?.namespace);
    expect(secret.metadata.annotations['kubernetes.io/service-account.name']).toBe(account.metadata?.name);
  });

  it('every binding binds a role and a ServiceAccount of its own file', () => {
    const bindings = docs.filter((doc) => doc.typed.kind === 'ClusterRoleBinding' || doc.typed.kind === 'RoleBinding');
    expect(bindings.length).toBe(4);
    for (const doc of bindings) {
      const binding = doc.raw as { roleRef: { kind: string; name: string }; subjects: { kind: string; name: string; namespace: string }[] };
      expect(
        inFile(doc.file).some((d) => d.typed.kind === binding.roleRef.kind && d.typed.metadata?.name === binding.roleRef.name),
        `${doc.file}: roleRef ${binding.roleRef.name}`,
      ).toBe(true);
      for (const subject of binding.subjects) {
        expect(subject.kind).toBe('ServiceAccount');
        expect(
          ofKind<V1ServiceAccount>('ServiceAccount', doc.file).some((sa) => sa.metadata?.name === subject.name && sa.metadata.namespace === subject.namespace),
          `${doc.file}: ${subject.namespace}/${subject.name}`,
        ).toBe(true);
      }
    }
  });
});

describe('infra/kubernetes/deploy/deployment.yaml', () => {
  const deployment = one(ofKind<V1Deployment>('Deployment'), 'the Deployment');
  const pod = deployment.spec!.template.spec!;
  const container = one(pod.containers, 'the container');

  it('one watcher, never two: 1 replica, Recreate', () => {
    expect(deployment.spec?.replicas).toBe(1);
    expect(deployment.spec?.strategy?.type).toBe('Recreate');
    expect(deployment.spec?.selector.matchLabels).toEqual(deployment.spec?.template.metadata?.labels);
  });

  it('runs `etcd-remediator watch --in-cluster` as the ServiceAccount rbac.yaml binds, in its Namespace', () => {
    expect(container.args?.slice(0, 2)).toEqual(['watch', '--in-cluster']);
    // The short name deploy/kustomization.yaml's images: rewrites (test/infra/kustomize.test.ts renders it).
    expect(container.image).toBe('etcd-remediator');
    const account = one(ofKind<V1ServiceAccount>('ServiceAccount', 'deploy/rbac.yaml'), 'the watcher ServiceAccount');
    expect(pod.serviceAccountName).toBe(account.metadata?.name);
    expect(deployment.metadata?.namespace).toBe(account.metadata?.namespace);
    expect(ofKind('Namespace', 'deploy/namespace.yaml').map((ns) => ns.metadata?.name)).toEqual([deployment.metadata?.namespace]);
  });

  it('non-root, read-only root filesystem, no privilege escalation, bounded resources', () => {
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(container.resources?.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources?.limits?.memory).toBeDefined();
  });

  it("probes the watch service's health endpoints on the port --health-addr binds on every address", () => {
    const args = container.args ?? [];
    const addr = args[args.indexOf('--health-addr') + 1];
    expect(args).toContain('--health-addr');
    // Loopback is the flag's default; the kubelet probes the pod's IP.
    expect(addr).toMatch(/^0\.0\.0\.0:\d+$/);
    const port = one(
      (container.ports ?? []).filter((p) => p.name === 'health'),
      'the health port',
    );
    expect(port.containerPort).toBe(Number(addr!.split(':')[1]));
    const probes = { startupProbe: '/healthz', livenessProbe: '/healthz', readinessProbe: '/readyz' } as const;
    for (const [kind, path] of Object.entries(probes)) {
      const probe = container[kind as keyof typeof probes];
      expect(probe?.httpGet, kind).toMatchObject({ path, port: 'health' });
      expect(probe?.exec, `${kind}: no exec probe (the image has no shell tools)`).toBeUndefined();
    }
    // The readiness check bounds its own wait at 5 s; the probe waits a little longer.
    expect(container.readinessProbe?.timeoutSeconds).toBeGreaterThan(5);
  });

  it("mounts no etcd certificate and names none: each cluster's comes from its <cluster>-etcd Secret through the API", () => {
    const args = container.args ?? [];
    for (const flag of ['--cacert', '--cert', '--key']) expect(args, flag).not.toContain(flag);
    // The one Secret volume: the /metrics token, read by the init container alone, which copies it
    // to a file only the watcher's user can read (deploy/deployment.yaml).
    const secrets = (pod.volumes ?? []).filter((volume) => volume.secret);
    expect(secrets.map((volume) => volume.secret?.secretName)).toEqual(['etcd-remediator-metrics-token']);
    expect((container.volumeMounts ?? []).map((mount) => mount.name)).not.toContain(secrets[0]!.name);
    for (const volume of pod.volumes ?? []) {
      if (volume === secrets[0]) continue;
      expect(volume.secret, `volume ${volume.name}`).toBeUndefined();
      expect(volume.projected, `volume ${volume.name}`).toBeUndefined();
      expect(volume.hostPath, `volume ${volume.name}`).toBeUndefined();
      expect(volume.configMap, `volume ${volume.name}`).toBeUndefined();
    }
    expect(container.env ?? []).toEqual([]);
    expect(container.envFrom ?? []).toEqual([]);
  });

  it('requests the memory it was measured to use, and limits it', () => {
    const text = fs.readFileSync(path.join(ROOT, 'deploy/deployment.yaml'), 'utf8');
    const measured = /(\d+) MiB at its peak/.exec(text);
    expect(measured, 'the measured peak, in a comment').not.toBeNull();
    const mebibytes = (quantity: string | undefined) => Number(/^(\d+)Mi$/.exec(quantity ?? '')?.[1]);
    const request = mebibytes(container.resources?.requests?.memory);
    const limit = mebibytes(container.resources?.limits?.memory);
    expect(request).toBeGreaterThanOrEqual(Number(measured![1]));
    expect(limit).toBeGreaterThanOrEqual(request);
    expect(container.resources?.limits?.cpu, 'no CPU limit: throttling stalls the event loop').toBeUndefined();
  });

  it("meets the restricted Pod Security Standard's container rules", () => {
    expect(pod.securityContext?.seccompProfile?.type).toBe('RuntimeDefault');
    expect(pod.hostNetwork ?? false).toBe(false);
    expect(container.securityContext?.privileged ?? false).toBe(false);
    expect(container.securityContext?.capabilities?.add ?? []).toEqual([]);
    for (const port of container.ports ?? []) expect(port.hostPort, port.name).toBeUndefined();
  });

  it('the state file lives on a mounted volume', () => {
    const volumes = new Set((pod.volumes ?? []).map((v) => v.name));
    for (const mount of container.volumeMounts ?? []) expect(volumes).toContain(mount.name);
    const state = container.args![container.args!.indexOf('--state') + 1]!;
    expect((container.volumeMounts ?? []).some((mount) => state.startsWith(`${mount.mountPath}/`))).toBe(true);
  });
});
