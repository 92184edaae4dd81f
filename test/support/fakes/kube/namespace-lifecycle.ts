// The NamespaceLifecycle admission plugin (k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle
// admission.go, on by default: https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#namespacelifecycle):
// an object is created only in a namespace that exists and is not being deleted. The namespaces
// every cluster starts with are there from the start (the system namespaces the plugin also
// refuses to delete).
import { forbidden, notFound } from './status.ts';
import { type ObjectStore, type ResourceType, metadataOf, resourceType } from './store.ts';

export const NAMESPACES = resourceType('', 'namespaces')!;

/** What kube-apiserver creates at start (the system namespaces controller, and `default`). */
export const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

export function putNamespace(store: ObjectStore, name: string): void {
  if (store.find(NAMESPACES, '', name)) return;
  store.put(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
}

/**
 * Refuses a create in a namespace that is missing (404, `namespaces "x" not found`, as the plugin
 * returns the namespace lister's error) or terminating (403, "unable to create new content in
 * namespace x because it is being terminated").
 */
export function admitInNamespace(store: ObjectStore, type: ResourceType, namespace: string, name: string): void {
  if (!type.namespaced || type === NAMESPACES) return;
  const found = store.find(NAMESPACES, '', namespace);
  if (!found) throw notFound('namespaces', '', namespace);
  if (metadataOf(found).deletionTimestamp !== undefined)
    throw forbidden(type.plural, type.group, name, `unable to create new content in namespace ${namespace} because it is being terminated`);
}
