// The garbage collector of kube-controller-manager, as documented
// (https://kubernetes.io/docs/concepts/architecture/garbage-collection/#owners-dependents and
// https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/): once an object is
// deleted, each dependent whose ownerReferences name it by uid is deleted in the background when
// none of its owners is left, or has the dangling reference dropped when another owner remains.
// A dependent with finalizers is only marked (deletionTimestamp) and goes once they are removed.
// The real collector works from a queue: the owner's DELETED is seen before the dependent's.
import { type Json, type JsonObject, isObject, text } from './patch.ts';
import type { Change, ObjectStore } from './store.ts';
import { metadataOf } from './store.ts';

/** How long after an owner goes its dependents are collected (the attemptToDelete queue; milliseconds in practice). */
export const DEFAULT_COLLECTION_DELAY_MS = 20;

const ownersOf = (object: JsonObject): JsonObject[] => {
  const references = metadataOf(object).ownerReferences;
  return (Array.isArray(references) ? references : []).filter(isObject);
};

const finalizersOf = (object: JsonObject): Json[] => {
  const finalizers = metadataOf(object).finalizers;
  return Array.isArray(finalizers) ? finalizers : [];
};

export interface GarbageCollector {
  /** Every dependent the collector deleted or marked, in order: `<plural>/<namespace>/<name>`. */
  readonly collected: string[];
  stop(): void;
}

export function startGarbageCollector(store: ObjectStore, delayMs = DEFAULT_COLLECTION_DELAY_MS): GarbageCollector {
  const timers = new Set<NodeJS.Timeout>();
  const collected: string[] = [];
  const exists = (uid: string): boolean => store.all().some(({ object }) => metadataOf(object).uid === uid);

  function collectDependentsOf(owner: JsonObject): void {
    const uid = text(metadataOf(owner).uid);
    for (const { type, object } of store.all()) {
      const owners = ownersOf(object);
      if (!owners.some((reference) => reference.uid === uid)) continue;
      const metadata = metadataOf(object);
      const namespace = text(metadata.namespace);
      const name = text(metadata.name);
      const remaining = owners.filter((reference) => reference.uid !== uid && exists(text(reference.uid)));
      if (remaining.length > 0) {
        store.put(type, { ...object, metadata: { ...metadata, ownerReferences: remaining } });
        continue;
      }
      collected.push(`${type.plural}/${namespace}/${name}`);
      if (finalizersOf(object).length === 0) store.remove(type, namespace, name);
      else if (metadata.deletionTimestamp === undefined)
        store.put(type, {
          ...object,
          metadata: { ...metadata, deletionTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), deletionGracePeriodSeconds: 0 },
        });
    }
  }

  const unsubscribe = store.subscribe((change: Change) => {
    if (change.type !== 'DELETED') return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      collectDependentsOf(change.object);
    }, delayMs);
    timers.add(timer);
  });
  return {
    collected,
    stop() {
      unsubscribe();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
