// In-memory objects for the kube fake, keyed by resource, namespace and name, with the API server's
// bookkeeping: one resourceVersion counter for every change, uid, creationTimestamp, generation, and
// a bounded history of changes for watches to resume from.
import { isDeepStrictEqual } from 'node:util';
import { randomUUID } from 'node:crypto';
import { type Json, type JsonObject, isObject, text } from './patch.ts';
import { notFound } from './status.ts';

export interface ResourceType {
  /** '' for the core group. */
  group: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  /** Has a /status subresource: writes to the main resource leave status alone, and the reverse. */
  status?: boolean;
}

export const RESOURCES: readonly ResourceType[] = [
  { group: '', plural: 'namespaces', kind: 'Namespace', namespaced: false, status: true },
  { group: '', plural: 'nodes', kind: 'Node', namespaced: false, status: true },
  { group: '', plural: 'pods', kind: 'Pod', namespaced: true, status: true },
  { group: '', plural: 'secrets', kind: 'Secret', namespaced: true },
  { group: '', plural: 'events', kind: 'Event', namespaced: true },
  { group: '', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  { group: '', plural: 'services', kind: 'Service', namespaced: true, status: true },
  { group: 'apps', plural: 'deployments', kind: 'Deployment', namespaced: true, status: true },
  { group: 'rbac.authorization.k8s.io', plural: 'clusterroles', kind: 'ClusterRole', namespaced: false },
  { group: 'rbac.authorization.k8s.io', plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
  { group: 'rbac.authorization.k8s.io', plural: 'roles', kind: 'Role', namespaced: true },
  { group: 'rbac.authorization.k8s.io', plural: 'rolebindings', kind: 'RoleBinding', namespaced: true },
  { group: 'apiextensions.k8s.io', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, status: true },
  { group: 'cluster.x-k8s.io', plural: 'machines', kind: 'Machine', namespaced: true, status: true },
  { group: 'cluster.x-k8s.io', plural: 'clusters', kind: 'Cluster', namespaced: true, status: true },
  { group: 'cluster.x-k8s.io', plural: 'machinehealthchecks', kind: 'MachineHealthCheck', namespaced: true, status: true },
  { group: 'controlplane.cluster.x-k8s.io', plural: 'kubeadmcontrolplanes', kind: 'KubeadmControlPlane', namespaced: true, status: true },
  { group: 'etcd-remediator.io', plural: 'etcdremediationrequests', kind: 'EtcdRemediationRequest', namespaced: true, status: true },
  { group: 'etcd-remediator.io', plural: 'etcdremediationrequesttemplates', kind: 'EtcdRemediationRequestTemplate', namespaced: true },
];

export function resourceType(group: string, plural: string): ResourceType | undefined {
  return RESOURCES.find((type) => type.group === group && type.plural === plural);
}

export function metadataOf(object: JsonObject): JsonObject {
  const metadata = object.metadata;
  if (!isObject(metadata)) throw new Error('object without metadata');
  return metadata;
}

function key(type: ResourceType, namespace: string, name: string): string {
  return `${type.group}/${type.plural}/${type.namespaced ? namespace : ''}/${name}`;
}

/** `a=b,c!=d,e`: the equality subset of label selectors. */
export function matchesSelector(labels: Json | undefined, selector: string | null): boolean {
  if (selector === null || selector === '') return true;
  const have = isObject(labels) ? labels : {};
  return selector.split(',').every((term) => {
    const notEqual = /^([^!=]+)!=(.*)$/.exec(term);
    if (notEqual) return have[notEqual[1]!.trim()] !== notEqual[2]!.trim();
    const equal = /^([^=]+)==?(.*)$/.exec(term);
    if (equal) return have[equal[1]!.trim()] === equal[2]!.trim();
    return term.trim() in have;
  });
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change, as a watch replays it; `previous` lets a filtered watch see an object leave its filter. */
export interface Change {
  type: ChangeType;
  resource: ResourceType;
  object: JsonObject;
  previous?: JsonObject;
  revision: number;
}

export type Resume = { changes: Change[] } | { tooOld: string };

/** What generation counts: everything but metadata and status (apiextensions customresource strategy). */
function specOf(object: JsonObject): JsonObject {
  const { metadata: _metadata, status: _status, ...rest } = object;
  return rest;
}

/** Equal but for the bookkeeping the store writes itself. */
function sameContent(a: JsonObject, b: JsonObject): boolean {
  const strip = (object: JsonObject): JsonObject => ({ ...object, metadata: { ...metadataOf(object), resourceVersion: null, generation: null } });
  return isDeepStrictEqual(strip(a), strip(b));
}

export class ObjectStore {
  private readonly objects = new Map<string, JsonObject>();
  private revision = 1;
  private readonly history: Change[] = [];
  /** A watch may resume from this resourceVersion or later; older ones have lost events. */
  private floor = 1;
  private readonly listeners = new Set<(change: Change) => void>();

  private readonly historyLimit: number;

  /** `historyLimit`: how many changes watches can resume over (the watch cache's capacity). */
  constructor(historyLimit = 1000) {
    this.historyLimit = historyLimit;
  }

  get resourceVersion(): string {
    return String(this.revision);
  }

  /**
   * Creates or replaces, stamping uid, resourceVersion, creationTimestamp and generation (1, then
   * +1 whenever anything but metadata and status changes). Writing what is already stored changes
   * nothing, as an API server's no-op update does not.
   */
  put(type: ResourceType, object: JsonObject): JsonObject {
    const metadata = metadataOf(object);
    const name = text(metadata.name);
    const namespace = type.namespaced ? text(metadata.namespace) || 'default' : '';
    const previous = this.objects.get(key(type, namespace, name));
    const stored: JsonObject = structuredClone(object);
    const storedMeta = metadataOf(stored);
    if (type.namespaced) storedMeta.namespace = namespace;
    storedMeta.uid = previous ? (metadataOf(previous).uid ?? randomUUID()) : (storedMeta.uid ?? randomUUID());
    storedMeta.creationTimestamp = previous ? (metadataOf(previous).creationTimestamp ?? null) : (storedMeta.creationTimestamp ?? new Date().toISOString());
    const generation = previous ? Number(metadataOf(previous).generation ?? 1) : 1;
    storedMeta.generation = previous && !isDeepStrictEqual(specOf(previous), specOf(stored)) ? generation + 1 : generation;
    if (previous && sameContent(previous, stored)) return structuredClone(previous);
    storedMeta.resourceVersion = String(++this.revision);
    this.objects.set(key(type, namespace, name), stored);
    this.record({ type: previous ? 'MODIFIED' : 'ADDED', resource: type, object: stored, ...(previous ? { previous } : {}), revision: this.revision });
    return structuredClone(stored);
  }

  find(type: ResourceType, namespace: string, name: string): JsonObject | undefined {
    const found = this.objects.get(key(type, namespace, name));
    return found ? structuredClone(found) : undefined;
  }

  get(type: ResourceType, namespace: string, name: string): JsonObject {
    const found = this.find(type, namespace, name);
    if (!found) throw notFound(type.plural, type.group, name);
    return found;
  }

  list(type: ResourceType, namespace: string | undefined, selector: string | null): JsonObject[] {
    const prefix = `${type.group}/${type.plural}/`;
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .map(([, object]) => object)
      .filter((object) => namespace === undefined || !type.namespaced || metadataOf(object).namespace === namespace)
      .filter((object) => matchesSelector(metadataOf(object).labels, selector))
      .map((object) => structuredClone(object));
  }

  /** Every stored object with its type, for the controllers that look across types (the garbage collector). */
  all(): { type: ResourceType; object: JsonObject }[] {
    return [...this.objects.entries()].map(([k, object]) => ({
      type: RESOURCES.find((t) => k.startsWith(`${t.group}/${t.plural}/`))!,
      object: structuredClone(object),
    }));
  }

  /** Deletes; the object returned (and the DELETED event) carries the deletion's resourceVersion. */
  remove(type: ResourceType, namespace: string, name: string): JsonObject {
    const found = this.get(type, namespace, name);
    this.objects.delete(key(type, namespace, name));
    metadataOf(found).resourceVersion = String(++this.revision);
    this.record({ type: 'DELETED', resource: type, object: found, revision: this.revision });
    return structuredClone(found);
  }

  /** Every change after `resourceVersion`, or, when the history no longer reaches back that far, why not. */
  changesSince(resourceVersion: number): Resume {
    // k8s.io/apiserver pkg/storage/cacher watch_cache.go: "too old resource version: %d (%d)", the
    // second number being the oldest resourceVersion a watch can still start from.
    if (resourceVersion < this.floor) return { tooOld: `too old resource version: ${resourceVersion} (${this.floor})` };
    return { changes: this.history.filter((change) => change.revision > resourceVersion) };
  }

  /** Calls `listener` with every change from now on; returns the unsubscribe. */
  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Test hook: forget the history, as a compaction does; a watch from before now gets 410 Gone. */
  compactHistory(): void {
    this.history.length = 0;
    this.floor = this.revision;
  }

  private record(change: Change): void {
    const kept = { ...change, object: structuredClone(change.object) };
    this.history.push(kept);
    while (this.history.length > this.historyLimit) this.floor = this.history.shift()!.revision;
    for (const listener of this.listeners) listener(kept);
  }
}
