// Discovery as the kube fake serves it: /version, /api, /apis and each group-version's resource
// list, in the legacy (unaggregated) form an API server without aggregated discovery answers even
// when the client asks for apidiscovery.k8s.io first, as kubectl does. client-node reads it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApisApi, CoreApi, CoreV1Api, CustomObjectsApi, VersionApi } from '@kubernetes/client-node';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

// What kubectl 1.33 sends for /api and /apis (client-go discovery_client.go acceptDiscoveryFormats).
const KUBECTL_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

let fake: KubeApiFake;

beforeAll(async () => {
  fake = await startKubeApiFake();
});

afterAll(async () => {
  await fake?.stop();
});

describe('kube API fake: discovery', () => {
  it('serves /version', async () => {
    const version = await fake.kubeConfig().makeApiClient(VersionApi).getCode();
    expect(version).toMatchObject({
      major: '1',
      minor: expect.stringMatching(/^\d+$/),
      gitVersion: expect.stringMatching(/^v1\.\d+\.\d+$/),
      platform: 'linux/amd64',
    });
  });

  it('answers /api and /apis in the legacy form, with Content-Type application/json, whatever the Accept', async () => {
    for (const path of ['/api', '/apis']) {
      const response = await fetch(`${fake.server}${path}`, { headers: { Accept: KUBECTL_ACCEPT } });
      expect([path, response.status, response.headers.get('content-type')]).toEqual([path, 200, 'application/json']);
    }
    const core = await fake.kubeConfig().makeApiClient(CoreApi).getAPIVersions();
    expect(core.versions).toEqual(['v1']);
    const groups = await fake.kubeConfig().makeApiClient(ApisApi).getAPIVersions();
    expect(groups.groups.map((group) => [group.name, group.versions.map((v) => v.groupVersion), group.preferredVersion?.groupVersion])).toEqual([
      ['apps', ['apps/v1'], 'apps/v1'],
      ['rbac.authorization.k8s.io', ['rbac.authorization.k8s.io/v1'], 'rbac.authorization.k8s.io/v1'],
      ['apiextensions.k8s.io', ['apiextensions.k8s.io/v1'], 'apiextensions.k8s.io/v1'],
      ['cluster.x-k8s.io', ['cluster.x-k8s.io/v1beta2', 'cluster.x-k8s.io/v1beta1'], 'cluster.x-k8s.io/v1beta2'],
      [
        'controlplane.cluster.x-k8s.io',
        ['controlplane.cluster.x-k8s.io/v1beta2', 'controlplane.cluster.x-k8s.io/v1beta1'],
        'controlplane.cluster.x-k8s.io/v1beta2',
      ],
      ['etcd-remediator.io', ['etcd-remediator.io/v1alpha1'], 'etcd-remediator.io/v1alpha1'],
    ]);
  });

  it('lists each group-version’s resources with their verbs, scope, kind and subresources', async () => {
    const v1 = await fake.kubeConfig().makeApiClient(CoreV1Api).getAPIResources();
    expect(v1.groupVersion).toBe('v1');
    const byName = Object.fromEntries(v1.resources.map((r) => [r.name, r]));
    expect(Object.keys(byName).sort()).toEqual([
      'events',
      'namespaces',
      'namespaces/status',
      'nodes',
      'nodes/status',
      'pods',
      'pods/exec',
      'pods/portforward',
      'pods/status',
      'secrets',
      'serviceaccounts',
      'services',
      'services/status',
    ]);
    expect(byName.pods).toMatchObject({ kind: 'Pod', namespaced: true, singularName: 'pod', shortNames: ['po'] });
    expect(byName.pods!.verbs.sort()).toEqual(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    expect(byName.nodes).toMatchObject({ kind: 'Node', namespaced: false });
    expect(byName['pods/exec']).toMatchObject({ kind: 'PodExecOptions', namespaced: true, verbs: ['create', 'get'] });
    expect(byName['pods/portforward']).toMatchObject({ kind: 'PodPortForwardOptions', namespaced: true, verbs: ['create', 'get'] });
    expect(byName['pods/status']).toMatchObject({ kind: 'Pod', verbs: ['get', 'patch', 'update'] });
    expect(byName.serviceaccounts).toMatchObject({ kind: 'ServiceAccount', namespaced: true, singularName: 'serviceaccount', shortNames: ['sa'] });
    expect(byName.services).toMatchObject({ kind: 'Service', namespaced: true, shortNames: ['svc'], categories: ['all'] });
    expect(byName['services/status']).toMatchObject({ kind: 'Service', verbs: ['get', 'patch', 'update'] });

    const custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
    const requests = (await custom.getAPIResources({ group: 'etcd-remediator.io', version: 'v1alpha1' })) as {
      groupVersion: string;
      resources: { name: string; kind: string; namespaced: boolean }[];
    };
    expect(requests.groupVersion).toBe('etcd-remediator.io/v1alpha1');
    expect(requests.resources.map((r) => [r.name, r.kind, r.namespaced])).toEqual([
      ['etcdremediationrequests', 'EtcdRemediationRequest', true],
      ['etcdremediationrequests/status', 'EtcdRemediationRequest', true],
      ['etcdremediationrequesttemplates', 'EtcdRemediationRequestTemplate', true],
    ]);
    // The built-in groups `kubectl apply -k infra/kubernetes/deploy` writes to.
    const listOf = async (group: string, version: string) =>
      (
        (await custom.getAPIResources({ group, version })) as { resources: { name: string; kind: string; namespaced: boolean; shortNames?: string[] }[] }
      ).resources.map((r) => [r.name, r.kind, r.namespaced, r.shortNames ?? []]);
    expect(await listOf('apps', 'v1')).toEqual([
      ['deployments', 'Deployment', true, ['deploy']],
      ['deployments/status', 'Deployment', true, []],
    ]);
    expect(await listOf('rbac.authorization.k8s.io', 'v1')).toEqual([
      ['clusterroles', 'ClusterRole', false, []],
      ['clusterrolebindings', 'ClusterRoleBinding', false, []],
      ['roles', 'Role', true, []],
      ['rolebindings', 'RoleBinding', true, []],
    ]);
    expect(await listOf('apiextensions.k8s.io', 'v1')).toEqual([
      ['customresourcedefinitions', 'CustomResourceDefinition', false, ['crd', 'crds']],
      ['customresourcedefinitions/status', 'CustomResourceDefinition', false, []],
    ]);
    const machines = (await custom.getAPIResources({ group: 'cluster.x-k8s.io', version: 'v1beta1' })) as { resources: { name: string }[] };
    expect(machines.resources.map((r) => r.name)).toEqual(expect.arrayContaining(['machines', 'machines/status']));
    // A version the group does not serve is not found.
    expect((await fetch(`${fake.server}/apis/etcd-remediator.io/v1beta1`)).status).toBe(404);
  });
});
