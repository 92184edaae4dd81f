// The kube fake's strategic merge patch (test/support/fakes/kube/strategic-merge-patch.ts) against
// what apimachinery's strategicpatch does with the same inputs: maps merge, lists merge by their
// patch merge key where the Go type says so and are replaced otherwise, and the directives
// kubectl's three-way patches carry ($setElementOrder, $retainKeys, $patch: delete) do what they
// do on an API server. The two Deployment patches are the ones kubectl 1.33 and 1.27 sent to the
// fake for a changed infra/kubernetes/deploy Deployment and back (kubectl-apply-deploy.test.ts),
// with the last-applied annotation left out.
import { describe, expect, it } from 'vitest';
import type { Json, JsonObject } from '../../support/fakes/kube/patch.ts';
import { goValue, patchMetaFor, strategicMergePatch, StrategicMergePatchError, type SmpFailure } from '../../support/fakes/kube/strategic-merge-patch.ts';

const DEPLOYMENT = patchMetaFor('apps', 'Deployment');
const POD = patchMetaFor('', 'Pod');

/** A Deployment as infra/kubernetes/deploy has it, cut down to what the patches touch. */
function deployment(): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'etcd-remediator', namespace: 'etcd-remediator-system', labels: { app: 'etcd-remediator' } },
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      template: {
        metadata: { labels: { app: 'etcd-remediator' } },
        spec: {
          containers: [
            {
              name: 'watcher',
              image: 'ghcr.io/example/etcd-remediator:0.1.0',
              args: ['watch', '--in-cluster'],
              ports: [{ name: 'health', containerPort: 8080, protocol: 'TCP' }],
              volumeMounts: [
                { name: 'state', mountPath: '/var/lib/etcd-remediator' },
                { name: 'tmp', mountPath: '/tmp' },
                { name: 'metrics-token', mountPath: '/run/etcd-remediator/metrics', readOnly: true },
              ],
            },
          ],
          volumes: [
            { name: 'state', emptyDir: { sizeLimit: '1Gi' } },
            { name: 'tmp', emptyDir: { sizeLimit: '256Mi' } },
            { name: 'metrics-token', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
          ],
        },
      },
    },
  };
}

/** kubectl's three-way patch for: a new image tag, an env var, a debug port, no /tmp volume, RollingUpdate. */
const CHANGE: Json = {
  spec: {
    strategy: { $retainKeys: ['rollingUpdate', 'type'], rollingUpdate: { maxSurge: 0, maxUnavailable: 1 }, type: 'RollingUpdate' },
    template: {
      spec: {
        '$setElementOrder/containers': [{ name: 'watcher' }],
        '$setElementOrder/volumes': [{ name: 'state' }, { name: 'metrics-token' }],
        containers: [
          {
            '$setElementOrder/ports': [{ containerPort: 8080 }, { containerPort: 9229 }],
            '$setElementOrder/volumeMounts': [{ mountPath: '/var/lib/etcd-remediator' }, { mountPath: '/run/etcd-remediator/metrics' }],
            env: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }],
            image: 'ghcr.io/example/etcd-remediator:0.2.0',
            name: 'watcher',
            ports: [{ containerPort: 9229, name: 'debug', protocol: 'TCP' }],
            volumeMounts: [{ $patch: 'delete', mountPath: '/tmp' }],
          },
        ],
        volumes: [{ $patch: 'delete', name: 'tmp' }],
      },
    },
  },
};

/** And back: the manifest as it was. */
const REVERT: Json = {
  spec: {
    strategy: { $retainKeys: ['type'], rollingUpdate: null, type: 'Recreate' },
    template: {
      spec: {
        '$setElementOrder/containers': [{ name: 'watcher' }],
        '$setElementOrder/volumes': [{ name: 'state' }, { name: 'tmp' }, { name: 'metrics-token' }],
        containers: [
          {
            '$setElementOrder/ports': [{ containerPort: 8080 }],
            '$setElementOrder/volumeMounts': [{ mountPath: '/var/lib/etcd-remediator' }, { mountPath: '/tmp' }, { mountPath: '/run/etcd-remediator/metrics' }],
            env: null,
            image: 'ghcr.io/example/etcd-remediator:0.1.0',
            name: 'watcher',
            ports: [{ $patch: 'delete', containerPort: 9229 }],
            volumeMounts: [{ mountPath: '/tmp', name: 'tmp' }],
          },
        ],
        volumes: [{ emptyDir: { sizeLimit: '256Mi' }, name: 'tmp' }],
      },
    },
  },
};

type PodSpec = { containers: JsonObject[]; volumes: JsonObject[] };
const podSpecOf = (object: JsonObject): PodSpec => ((object.spec as JsonObject).template as JsonObject).spec as unknown as PodSpec;

/** The failure a patch is refused with: how the API server answers it, and its text. */
function failure(patch: () => unknown): { failure: SmpFailure; message: string } {
  try {
    patch();
  } catch (error) {
    if (error instanceof StrategicMergePatchError) return { failure: error.failure, message: error.message };
    throw error;
  }
  throw new Error('the patch was applied');
}

describe('strategic merge patch: the Deployment patches kubectl sends', () => {
  it('merges containers by name, ports by containerPort, env by name, volumeMounts by mountPath, volumes by name', () => {
    const changed = strategicMergePatch(deployment(), CHANGE, DEPLOYMENT);
    const spec = podSpecOf(changed);
    expect(spec.containers).toHaveLength(1);
    expect(spec.containers[0]).toEqual({
      name: 'watcher',
      image: 'ghcr.io/example/etcd-remediator:0.2.0',
      args: ['watch', '--in-cluster'],
      env: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }],
      ports: [
        { name: 'health', containerPort: 8080, protocol: 'TCP' },
        { containerPort: 9229, name: 'debug', protocol: 'TCP' },
      ],
      volumeMounts: [
        { name: 'state', mountPath: '/var/lib/etcd-remediator' },
        { name: 'metrics-token', mountPath: '/run/etcd-remediator/metrics', readOnly: true },
      ],
    });
    expect(spec.volumes.map((v) => v.name)).toEqual(['state', 'metrics-token']);
    // $retainKeys: the strategy is what the patch lists, nothing else of the old one.
    expect((changed.spec as JsonObject).strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } });
    // Nothing of the directives is stored.
    expect(JSON.stringify(changed)).not.toMatch(/\$(patch|retainKeys|setElementOrder)/);
  });

  it('and the patch back restores the manifest exactly, lists in their order ($setElementOrder puts /tmp back in the middle)', () => {
    const restored = strategicMergePatch(strategicMergePatch(deployment(), CHANGE, DEPLOYMENT), REVERT, DEPLOYMENT);
    expect(restored).toEqual(deployment());
    expect(podSpecOf(restored).volumes.map((v) => v.name)).toEqual(['state', 'tmp', 'metrics-token']);
  });

  it('leaves its arguments alone', () => {
    const original = deployment();
    const patch = structuredClone(CHANGE);
    strategicMergePatch(original, patch, DEPLOYMENT);
    expect(original).toEqual(deployment());
    expect(patch).toEqual(CHANGE);
  });
});

describe('strategic merge patch: maps and lists', () => {
  const pod = (spec: JsonObject, metadata: JsonObject = { name: 'p' }): JsonObject => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec });

  it('merges maps as a merge patch does: keys set, null deletes, other keys kept', () => {
    const out = strategicMergePatch(
      pod({}, { name: 'p', labels: { a: '1', b: '2' }, annotations: { x: 'y' } }),
      { metadata: { labels: { b: null, c: '3' } } },
      POD,
    );
    expect(out.metadata).toEqual({ name: 'p', labels: { a: '1', c: '3' }, annotations: { x: 'y' } });
  });

  it('a container the patch names merges into it; one it does not name is appended, in the patch’s order', () => {
    const out = strategicMergePatch(
      pod({ containers: [{ name: 'a', image: 'a:1', args: ['x'] }] }),
      {
        spec: {
          containers: [
            { name: 'b', image: 'b:1' },
            { name: 'a', image: 'a:2' },
          ],
        },
      },
      POD,
    );
    expect((out.spec as PodSpec).containers).toEqual([
      { name: 'b', image: 'b:1' },
      { name: 'a', image: 'a:2', args: ['x'] },
    ]);
  });

  it('a list the Go type does not merge (args, tolerations) is replaced whole', () => {
    const out = strategicMergePatch(
      pod({ containers: [{ name: 'a', args: ['x', 'y'] }], tolerations: [{ key: 'k', operator: 'Exists' }] }),
      { spec: { containers: [{ name: 'a', args: ['z'] }], tolerations: [{ key: 'j', operator: 'Exists' }] } },
      POD,
    );
    expect(out.spec).toEqual({ containers: [{ name: 'a', args: ['z'] }], tolerations: [{ key: 'j', operator: 'Exists' }] });
  });

  it('a ClusterRole’s rules, a CRD’s versions: no patch strategy, replaced', () => {
    const role = { metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] };
    const rules = [{ apiGroups: [''], resources: ['events'], verbs: ['create'] }];
    expect(strategicMergePatch(role, { rules }, patchMetaFor('rbac.authorization.k8s.io', 'ClusterRole')).rules).toEqual(rules);
    const crd = { metadata: { name: 'c' }, spec: { versions: [{ name: 'v1alpha1', served: true }] } };
    const versions = [{ name: 'v1alpha2', served: true }];
    expect(strategicMergePatch(crd, { spec: { versions } }, patchMetaFor('apiextensions.k8s.io', 'CustomResourceDefinition')).spec).toEqual({ versions });
  });

  it('finalizers merge as a set of strings; $deleteFromPrimitiveList takes some out', () => {
    const meta = { name: 'p', finalizers: ['a', 'b'] };
    expect(strategicMergePatch(pod({}, meta), { metadata: { finalizers: ['b', 'c'] } }, POD).metadata).toEqual({ name: 'p', finalizers: ['a', 'b', 'c'] });
    expect(strategicMergePatch(pod({}, meta), { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, POD).metadata).toEqual({
      name: 'p',
      finalizers: ['b'],
    });
  });

  it('$patch: replace makes a list or a map the patch’s own; $patch: delete empties a map', () => {
    const volumes = [{ name: 'a', emptyDir: {} }];
    expect(strategicMergePatch(pod({ volumes }), { spec: { volumes: [{ name: 'b', emptyDir: {} }, { $patch: 'replace' }] } }, POD).spec).toEqual({
      volumes: [{ name: 'b', emptyDir: {} }],
    });
    expect(strategicMergePatch(pod({ nodeSelector: { a: '1' } }), { spec: { nodeSelector: { b: '2', $patch: 'replace' } } }, POD).spec).toEqual({
      nodeSelector: { b: '2' },
    });
    expect(strategicMergePatch(pod({ nodeSelector: { a: '1' } }), { spec: { nodeSelector: { $patch: 'delete' } } }, POD).spec).toEqual({ nodeSelector: {} });
  });

  it('$setElementOrder orders the patch’s items; the server’s own go where the live list had them (sidecar stood before b)', () => {
    const out = strategicMergePatch(
      pod({ containers: [{ name: 'a' }, { name: 'sidecar' }, { name: 'b' }] }),
      { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'b', image: 'b:2' }] } },
      POD,
    );
    expect((out.spec as PodSpec).containers.map((c) => c.name)).toEqual(['sidecar', 'b', 'a']);
  });

  it('a custom resource has no patch metadata: the API server takes no strategic merge patch for it', () => {
    expect(patchMetaFor('etcd-remediator.io', 'EtcdRemediationRequest')).toBeUndefined();
    expect(patchMetaFor('cluster.x-k8s.io', 'Machine')).toBeUndefined();
    expect(patchMetaFor('apps', 'Deployment')).toBeDefined();
  });
});

describe('strategic merge patch: what the API server refuses, and how', () => {
  const spec = (value: JsonObject): JsonObject => ({ metadata: { name: 'p' }, spec: value });

  it('$retainKeys must list every key the patch sets: 400 "invalid patch format of retainKeys"', () => {
    expect(
      failure(() => strategicMergePatch(deployment(), { spec: { strategy: { $retainKeys: ['type'], type: 'RollingUpdate', rollingUpdate: {} } } }, DEPLOYMENT)),
    ).toEqual({
      failure: 'BadRequest',
      message: 'invalid patch format of retainKeys',
    });
  });

  it('a $setElementOrder or $deleteFromPrimitiveList key without its list: 400', () => {
    expect(failure(() => strategicMergePatch(spec({}), { spec: { $setElementOrder: [] } }, POD))).toEqual({
      failure: 'BadRequest',
      message: 'invalid patch format of setElementOrder list',
    });
    expect(failure(() => strategicMergePatch(spec({}), { metadata: { $deleteFromPrimitiveList: ['a'] } }, POD))).toEqual({
      failure: 'BadRequest',
      message: 'invalid patch format of primitive list',
    });
  });

  it('an item without its merge key, a $patch it does not know, `$patch: merge` in a list: errors of their own (500)', () => {
    expect(failure(() => strategicMergePatch(spec({ containers: [{ name: 'a' }] }), { spec: { containers: [{ image: 'x' }] } }, POD))).toEqual({
      failure: 'Internal',
      message: 'map: map[image:x] does not contain declared merge key: name',
    });
    expect(failure(() => strategicMergePatch(spec({ nodeSelector: {} }), { spec: { nodeSelector: { $patch: 'keep', a: '1' } } }, POD))).toEqual({
      failure: 'Internal',
      message: 'unknown patch type: keep in map: map[$patch:keep a:1]',
    });
    expect(failure(() => strategicMergePatch(spec({ containers: [{ name: 'a' }] }), { spec: { containers: [{ $patch: 'merge' }] } }, POD))).toEqual({
      failure: 'Internal',
      message: 'merging lists cannot yet be specified in the patch',
    });
  });

  it('a list of lists in a merging list: 422 "lists of lists are not supported"; items of mixed types: 500', () => {
    expect(failure(() => strategicMergePatch({ metadata: { finalizers: [] } }, { metadata: { finalizers: [['b']] } }, POD))).toEqual({
      failure: 'Unprocessable',
      message: 'lists of lists are not supported',
    });
    expect(failure(() => strategicMergePatch({ metadata: { finalizers: ['a'] } }, { metadata: { finalizers: [['b']] } }, POD))).toEqual({
      failure: 'Internal',
      message: 'list element types are not identical: [[a] [[b]]]',
    });
  });

  it('a body that is not an object: 400 with encoding/json’s words; null patches nothing', () => {
    expect(failure(() => strategicMergePatch(spec({}), [1], POD))).toEqual({
      failure: 'BadRequest',
      message: 'json: cannot unmarshal array into Go value of type map[string]interface {}',
    });
    expect(strategicMergePatch(spec({ a: 1 }), null, POD)).toEqual(spec({ a: 1 }));
  });

  it('renders values as Go’s %v does', () => {
    expect(goValue({ b: [1, 'x', null], a: { c: true } })).toBe('map[a:map[c:true] b:[1 x <nil>]]');
  });
});
