// In-memory objects for the kube fake, keyed by resource, namespace and name.
import { randomUUID } from 'node:crypto';
import { type Json, type JsonObject, isObject, text } from './patch.ts';
import { notFound } from './status.ts';

export interface ResourceType {
  /** '' for the core group. */
  group: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export const RESOURCES: readonly ResourceType[] = [
  { group: '', plural: 'nodes', kind: 'Node', namespaced: false },
  { group: '', plural: 'pods', kind: 'Pod', namespaced: true },
  { group: '', plural: 'secrets', kind: 'Secret', namespaced: true },
  { group: 'cluster.x-k8s.io', plural: 'machines', kind: 'Machine', namespaced: true },
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

export class ObjectStore {
  private readonly objects = new Map<string, JsonObject>();
  private revision = 1;

  get resourceVersion(): string {
    return String(this.revision);
  }

  /** Creates or replaces, stamping uid, resourceVersion and creationTimestamp. */
  put(type: ResourceType, object: JsonObject): JsonObject {
    const metadata = metadataOf(object);
    const name = text(metadata.name);
    const namespace = type.namespaced ? text(metadata.namespace) || 'default' : '';
    const previous = this.objects.get(key(type, namespace, name));
    const stored: JsonObject = structuredClone(object);
    const storedMeta = metadataOf(stored);
    if (type.namespaced) storedMeta.namespace = namespace;
    storedMeta.uid = previous ? metadataOf(previous).uid ?? randomUUID() : storedMeta.uid ?? randomUUID();
    storedMeta.creationTimestamp = previous ? metadataOf(previous).creationTimestamp ?? null : storedMeta.creationTimestamp ?? new Date().toISOString();
    storedMeta.resourceVersion = String(++this.revision);
    this.objects.set(key(type, namespace, name), stored);
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

  remove(type: ResourceType, namespace: string, name: string): JsonObject {
    const found = this.get(type, namespace, name);
    this.objects.delete(key(type, namespace, name));
    this.revision++;
    return found;
  }
}
