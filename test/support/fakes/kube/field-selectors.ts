// Field selectors as the API server reads them: `a=b`, `a==b`, `a!=b`, comma-separated, over the
// fields each resource supports (metadata.name and metadata.namespace for every one; for Events
// also those of pkg/apis/core/v1 conversion.go's field label conversion: involvedObject.*, reason,
// reportingComponent, source, type; for Pods spec.nodeName, status.phase and the others it lists, as
// `kubectl describe node` asks for a Node's pods). Any other field is refused, 400 "field label not supported".
import { type Json, type JsonObject, isObject, text } from './patch.ts';
import { badRequest } from './status.ts';
import { type ResourceType, metadataOf } from './store.ts';

export type Filter = (object: JsonObject) => boolean;

const path =
  (...keys: string[]) =>
  (object: JsonObject): string => {
    let value: Json | undefined = object;
    for (const key of keys) value = isObject(value) ? value[key] : undefined;
    return text(value);
  };

const COMMON: Record<string, (object: JsonObject) => string> = {
  'metadata.name': (object) => text(metadataOf(object).name),
  'metadata.namespace': (object) => text(metadataOf(object).namespace),
};

const INVOLVED = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'] as const;

const EVENT_FIELDS: Record<string, (object: JsonObject) => string> = {
  ...COMMON,
  ...Object.fromEntries(INVOLVED.map((key) => [`involvedObject.${key}`, path('involvedObject', key)])),
  reason: path('reason'),
  reportingComponent: path('reportingComponent'),
  source: path('source', 'component'),
  type: path('type'),
};

const POD_FIELDS: Record<string, (object: JsonObject) => string> = {
  ...COMMON,
  'spec.nodeName': path('spec', 'nodeName'),
  'spec.restartPolicy': path('spec', 'restartPolicy'),
  'spec.schedulerName': path('spec', 'schedulerName'),
  'spec.serviceAccountName': path('spec', 'serviceAccountName'),
  'status.phase': path('status', 'phase'),
  'status.podIP': path('status', 'podIP'),
  'status.nominatedNodeName': path('status', 'nominatedNodeName'),
};

const fieldsOf = (type: ResourceType | undefined) =>
  type?.group !== '' ? COMMON : type.plural === 'events' ? EVENT_FIELDS : type.plural === 'pods' ? POD_FIELDS : COMMON;

/** The filter a field selector makes for objects of `type`; a KubeFakeError (400) for a field it does not support. */
export function fieldFilter(type: ResourceType | undefined, selector: string | null): Filter {
  const fields = fieldsOf(type);
  const terms = (selector ?? '')
    .split(',')
    .filter((term) => term !== '')
    .map((term) => {
      const match = /^([^!=]+)(==?|!=)(.*)$/.exec(term);
      const field = match?.[1]?.trim();
      const read = field === undefined ? undefined : fields[field];
      if (!match || !read) throw badRequest(`field label not supported: ${field ?? term}`);
      return { read, equal: match[2] !== '!=', value: match[3]!.trim() };
    });
  return (object) => terms.every((term) => (term.read(object) === term.value) === term.equal);
}
