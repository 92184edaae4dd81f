// Discovery for the kube fake, as an API server serves it without aggregated discovery: /version,
// /api (APIVersions), /apis (APIGroupList), /apis/<group> (APIGroup) and each group-version's
// APIResourceList (apiserver pkg/endpoints/discovery). An Accept that asks for
// apidiscovery.k8s.io's aggregated form first gets the legacy form with Content-Type
// application/json, as servers before 1.26 answer; client-go then reads it the legacy way
// (discovery_client.go), which is what kubectl does against them. Only what the fake serves is
// listed: its resource types, their subresources and the verbs the routes answer.
import type { Json, JsonObject } from './patch.ts';
import { RESOURCES, type ResourceType } from './store.ts';

/** The version the fake says it is: the release kube-paths.md reads its failure texts from. */
export const VERSION = {
  major: '1',
  minor: '35',
  gitVersion: 'v1.35.7',
  gitTreeState: 'clean',
  goVersion: 'go1.24.11',
  compiler: 'gc',
  platform: 'linux/amd64',
};

/**
 * The versions each group serves, preferred first: the core group; the built-in groups
 * `kubectl apply -k infra/kubernetes/deploy` writes to, in the order a kube-apiserver lists them
 * (apps, rbac.authorization.k8s.io, apiextensions.k8s.io: the built-in groups before the CRDs'
 * groups, as aggregator's group priorities sort them); Cluster API from v1.11 on (v1beta2 the storage
 * version, v1beta1 still served); ours as infra/kubernetes/deploy/crds defines it.
 */
const GROUP_VERSIONS: Record<string, readonly string[]> = {
  '': ['v1'],
  apps: ['v1'],
  'rbac.authorization.k8s.io': ['v1'],
  'apiextensions.k8s.io': ['v1'],
  'cluster.x-k8s.io': ['v1beta2', 'v1beta1'],
  // KCP's group, served alongside core Cluster API's versions.
  'controlplane.cluster.x-k8s.io': ['v1beta2', 'v1beta1'],
  'etcd-remediator.io': ['v1alpha1'],
};

/** Every group-version the fake serves, the core group first: the paths /openapi/v3 indexes. */
export function servedGroupVersions(): { group: string; version: string }[] {
  return Object.entries(GROUP_VERSIONS).flatMap(([group, versions]) => versions.map((version) => ({ group, version })));
}

/**
 * kubectl's short names and categories, as each type's own definition gives them (the built-in
 * types' rest storage ShortNames() and Categories(), pkg/registry/.../storage/storage.go; the
 * CRDs' spec.names).
 */
const NAMES: Record<string, { shortNames?: string[]; categories?: string[] }> = {
  namespaces: { shortNames: ['ns'] },
  nodes: { shortNames: ['no'] },
  pods: { shortNames: ['po'], categories: ['all'] },
  events: { shortNames: ['ev'] },
  serviceaccounts: { shortNames: ['sa'] },
  services: { shortNames: ['svc'], categories: ['all'] },
  deployments: { shortNames: ['deploy'], categories: ['all'] },
  customresourcedefinitions: { shortNames: ['crd', 'crds'], categories: ['api-extensions'] },
  machines: { shortNames: ['ma'], categories: ['cluster-api'] },
  kubeadmcontrolplanes: { shortNames: ['kcp'], categories: ['cluster-api'] },
  clusters: { shortNames: ['cl'], categories: ['cluster-api'] },
  etcdremediationrequests: { shortNames: ['erreq'], categories: ['cluster-api', 'etcd-remediator'] },
  etcdremediationrequesttemplates: { shortNames: ['erreqt'], categories: ['cluster-api', 'etcd-remediator'] },
};

/** What routes.ts answers (no deletecollection). */
const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

export function servesVersion(group: string, version: string): boolean {
  return GROUP_VERSIONS[group]?.includes(version) ?? false;
}

function groupVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

function resourcesOf(type: ResourceType): JsonObject[] {
  const { namespaced, kind } = type;
  const main: JsonObject = { name: type.plural, singularName: kind.toLowerCase(), namespaced, kind, verbs: VERBS, ...NAMES[type.plural] };
  const status = type.status ? [{ name: `${type.plural}/status`, singularName: '', namespaced, kind, verbs: ['get', 'patch', 'update'] }] : [];
  // The stream subresources take options objects and are reached by GET (WebSocket) or POST (SPDY).
  const streams =
    type.group === '' && type.plural === 'pods'
      ? [
          { name: 'pods/exec', singularName: '', namespaced, kind: 'PodExecOptions', verbs: ['create', 'get'] },
          { name: 'pods/portforward', singularName: '', namespaced, kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
        ]
      : [];
  return [main, ...streams, ...status];
}

function apiGroup(group: string): JsonObject {
  const versions = (GROUP_VERSIONS[group] ?? []).map((version) => ({ groupVersion: groupVersion(group, version), version }));
  return { name: group, versions, ...(versions[0] ? { preferredVersion: versions[0] } : {}) };
}

/** The discovery document for `pathname`, or undefined when it is not a discovery path. */
export function discovery(pathname: string, serverAddress: string): Json | undefined {
  const parts = pathname.split('/').filter((part) => part !== '');
  if (parts.length === 1 && parts[0] === 'version') return VERSION;
  if (parts.length === 1 && parts[0] === 'api') {
    return { kind: 'APIVersions', versions: [...GROUP_VERSIONS['']!], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
  }
  if (parts.length === 1 && parts[0] === 'apis') {
    const groups = Object.keys(GROUP_VERSIONS).filter((group) => group !== '');
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(apiGroup) };
  }
  if (parts[0] === 'apis' && parts.length === 2 && GROUP_VERSIONS[parts[1]!]) return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(parts[1]!) };
  const [group, version] =
    parts[0] === 'api' && parts.length === 2 ? ['', parts[1]!] : parts[0] === 'apis' && parts.length === 3 ? [parts[1]!, parts[2]!] : [undefined, undefined];
  if (group === undefined || version === undefined || !servesVersion(group, version)) return undefined;
  const resources = RESOURCES.filter((type) => type.group === group).flatMap(resourcesOf);
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(group, version), resources };
}
