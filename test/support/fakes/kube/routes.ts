// REST routing for the kube fake: GET one, LIST (label and field selectors), POST, PUT, PATCH and
// DELETE on the stored resource types, and GET/PUT/PATCH on their /status subresource. Watches are
// in watch.ts. PATCH takes the content types the API server takes for the type
// (apiserver handlers/patch.go PatchResource): JSON patch, merge patch and, for a built-in type,
// strategic merge patch (strategic-merge-patch.ts); server-side apply is not modelled. A write of a
// built-in type is decoded as into its Go type (openapi.ts decodeBuiltin): unknown fields dropped,
// and refused under fieldValidation=Strict, which kubectl sends by default.
import { convertCapi, converts, restoreLost, versionOf } from './capi-conversion.ts';
import { objectFromProtobuf, ProtobufBodyError } from './protobuf-body.ts';
import { type Admitted, admitCustomResource } from './crd-admission.ts';
import { admitInNamespace } from './namespace-lifecycle.ts';
import { servesVersion } from './discovery.ts';
import { admitEvent } from './event-admission.ts';
import { fieldFilter } from './field-selectors.ts';
import { tableFor, wantsTable } from './tables.ts';
import { BUILTIN_PATCH_TYPES, CUSTOM_PATCH_TYPES, decodeBuiltin, isBuiltin } from './openapi.ts';
import { type Json, type JsonObject, isObject, jsonPatch, mergePatch, text } from './patch.ts';
import { KubeFakeError, alreadyExists, badRequest, conflict, internal, invalid } from './status.ts';
import { type ObjectStore, type ResourceType, metadataOf, resourceType } from './store.ts';
import { StrategicMergePatchError, goValue, patchMetaFor, strategicMergePatch } from './strategic-merge-patch.ts';

export interface RestRequest {
  method: string;
  url: URL;
  contentType: string;
  body: string;
  /** The body's bytes, for a protobuf one (protobuf-body.ts). */
  bytes?: Uint8Array;
  /** The Accept header: kubectl get asks for a Table first. */
  accept?: string;
}

export interface RestResponse {
  code: number;
  body: Json;
  /** Warning header texts (apiserver warning.AddWarning), e.g. for pruned unknown fields. */
  warnings?: string[];
}

export interface Route {
  type: ResourceType;
  version: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

export function parsePath(pathname: string): Route | undefined {
  const parts = pathname
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) [group, version, rest] = ['', parts[1]!, parts.slice(2)];
  else if (parts[0] === 'apis' && parts.length >= 3) [group, version, rest] = [parts[1]!, parts[2]!, parts.slice(3)];
  else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) [namespace, rest] = [rest[1], rest.slice(2)];
  const type = resourceType(group, rest[0] ?? '');
  // A version the group does not serve is not found, as on an API server.
  if (!type || !servesVersion(group, version)) return undefined;
  return { type, version, namespace, name: rest[1], subresource: rest[2] };
}

export function apiVersion(route: Route): string {
  return route.type.group === '' ? route.version : `${route.type.group}/${route.version}`;
}

/** The object as the request's version shows it: a Cluster API object in another version is converted (capi-conversion.ts). */
export const shown = (route: Route, object: JsonObject): JsonObject => convertCapi(object, route.version);

/**
 * A write in the request's version, as the store keeps it: in the version the object was first
 * written in (a new object: the request's), with what the conversion cannot carry kept from `current`.
 */
function toStored(route: Route, object: JsonObject, current?: JsonObject): JsonObject {
  if (!converts(route.type.group, route.type.kind)) return object;
  const own = current === undefined ? route.version : versionOf(current) || route.version;
  return restoreLost(convertCapi({ ...object, apiVersion: apiVersion(route), kind: route.type.kind }, own), current);
}

export interface DeleteHooks {
  /** Machines: stamped with a deletionTimestamp, then gone later, as CAPI drains and deletes. */
  graceful(type: ResourceType, namespace: string, name: string): boolean;
}

function deletedStatus(route: Route, name: string, uid: Json | undefined): JsonObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name, ...(route.type.group === '' ? {} : { group: route.type.group }), kind: route.type.plural, uid: text(uid) },
  };
}

/**
 * The body of a create or an update: JSON, or protobuf as kubectl's typed clients send it from 1.32
 * on (`kubectl create secret …`), for the kinds protobuf-body.ts reads; another kind's protobuf is
 * refused, 415, saying so, rather than read wrong.
 */
function writeBody(request: RestRequest): Json {
  if (request.contentType.split(';')[0]!.trim() !== 'application/vnd.kubernetes.protobuf') return parseBody(request.body);
  try {
    return objectFromProtobuf(request.bytes ?? Buffer.from(request.body, 'utf8'));
  } catch (error) {
    if (error instanceof ProtobufBodyError && error.unmodelled) throw unsupportedMediaType(error.message);
    throw badRequest(`the body of the request was in an unknown format: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function parseBody(body: string): Json {
  try {
    return JSON.parse(body) as Json;
  } catch {
    throw badRequest('the body of the request was in an unknown format');
  }
}

/** A write to the main resource leaves status as it was, when the type has a status subresource. */
function keepStatus(type: ResourceType, next: JsonObject, current: JsonObject | undefined): JsonObject {
  if (!type.status) return next;
  const { status: _ignored, ...rest } = next;
  return current?.status === undefined ? rest : { ...rest, status: current.status };
}

/** A write to /status changes status only (apiextensions customresource statusStrategy.PrepareForUpdate). */
function statusOnly(next: JsonObject, current: JsonObject): JsonObject {
  const { status: _old, ...rest } = current;
  return next.status === undefined ? rest : { ...rest, status: next.status };
}

/** Optimistic concurrency: a resourceVersion in the body must be the stored one. */
function checkVersion(route: Route, name: string, next: JsonObject, current: JsonObject): void {
  const wanted = metadataOf(next).resourceVersion;
  if (wanted !== undefined && wanted !== null && wanted !== '' && wanted !== metadataOf(current).resourceVersion) {
    throw conflict(route.type.plural, route.type.group, name, 'the object has been modified; please apply your changes to the latest version and try again');
  }
}

/**
 * rest/update.go BeforeUpdate: an update may leave metadata.uid out (the stored one is kept), but
 * one that names another is refused by the common field validation (ValidateObjectMetaUpdate):
 * 422 Invalid, "metadata.uid: Invalid value: ...: field is immutable".
 */
function checkUidUnchanged(route: Route, name: string, next: JsonObject, current: JsonObject): void {
  const wanted = metadataOf(next).uid;
  const stored = text(metadataOf(current).uid);
  if (typeof wanted !== 'string' || wanted === '' || wanted === stored) return;
  throw invalid(route.type.kind, route.type.group, name, [
    { reason: 'FieldValueInvalid', message: `Invalid value: "${wanted}": field is immutable`, field: 'metadata.uid' },
  ]);
}

function finalizersOf(object: JsonObject): Json[] {
  const finalizers = metadataOf(object).finalizers;
  return Array.isArray(finalizers) ? finalizers : [];
}

/**
 * apimachinery ValidateObjectMetaUpdate (ValidateNoNewFinalizers): an object being deleted may lose
 * finalizers, never gain one: 422, `metadata.finalizers: Forbidden: no new finalizers can be added
 * if the object is being deleted, found new finalizers []string{"x"}`.
 */
function checkNoNewFinalizers(route: Route, name: string, next: JsonObject, current: JsonObject): void {
  if (metadataOf(current).deletionTimestamp === undefined) return;
  const before = new Set(finalizersOf(current).map(text));
  const added = [...new Set(finalizersOf(next).map(text))].filter((finalizer) => !before.has(finalizer)).sort();
  if (added.length === 0) return;
  const found = `[]string{${added.map((f) => JSON.stringify(f)).join(', ')}}`;
  throw invalid(route.type.kind, route.type.group, name, [
    {
      reason: 'FieldValueForbidden',
      message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${found}`,
      field: 'metadata.finalizers',
    },
  ]);
}

/** Stores an update; an object being deleted goes once its last finalizer is gone. */
function update(store: ObjectStore, route: Route, name: string, next: JsonObject): JsonObject {
  metadataOf(next).name = name;
  const stored = store.put(route.type, next);
  const metadata = metadataOf(stored);
  // Machines go on the fake's own timer, which stands for Cluster API's drain (api-server.ts).
  const gone = metadata.deletionTimestamp !== undefined && finalizersOf(stored).length === 0 && route.type.plural !== 'machines';
  return gone ? store.remove(route.type, text(metadata.namespace), name) : stored;
}

/** How a write came: a patch's strict-decoding failure is worded apart from a create's or an update's. */
type Write = { how: 'create' | 'update' } | { how: 'patch'; patchType: string; patch: Json; patched: JsonObject };

/**
 * handlers/create.go and update.go transformDecodeError: `<Kind> in version "<v>" cannot be handled
 * as a <Kind>: strict decoding error: unknown field "x", ...` (400); handlers/patch.go: an Invalid of
 * the empty GroupKind on field "patch", whose value is the patched object's JSON (jsonPatcher) or
 * the patch map in Go's %v (strategic merge patch).
 */
function strictDecodingError(route: Route, write: Write, unknown: string[]): KubeFakeError {
  const decoding = `strict decoding error: ${unknown.join(', ')}`;
  if (write.how !== 'patch') return badRequest(`${route.type.kind} in version "${route.version}" cannot be handled as a ${route.type.kind}: ${decoding}`);
  const value = write.patchType === STRATEGIC ? goValue(write.patch) : JSON.stringify(write.patched);
  return invalid('', '', '', [{ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${decoding}`, field: 'patch' }]);
}

/**
 * A write as the API server would store it: a built-in object decoded into its Go type (unknown
 * fields dropped: named in Warning headers under fieldValidation Warn, the default when none is
 * sent (handlers/rest.go fieldValidation), refused under Strict, dropped silently under Ignore),
 * an Event then validated; a custom resource pruned and checked against its CRD.
 */
function admitted(route: Route, request: RestRequest, object: JsonObject, write: Write): Admitted {
  const fieldValidation = request.url.searchParams.get('fieldValidation');
  if (isBuiltin(route.type)) {
    const decoded = decodeBuiltin(route.type, object);
    const directive = fieldValidation || 'Warn';
    if (decoded.unknown.length > 0 && directive === 'Strict') throw strictDecodingError(route, write, decoded.unknown);
    const warnings = directive === 'Warn' ? decoded.unknown : [];
    if (route.type.group === '' && route.type.plural === 'events') return { object: admitEvent(decoded.object), warnings };
    return { object: decoded.object, warnings };
  }
  return admitCustomResource(route.type.group, route.type.plural, route.version, object, fieldValidation);
}

/**
 * What the type's registry strategy sets on create. Namespace: pkg/registry/core/namespace/strategy.go
 * PrepareForCreate (status.phase Active, the `kubernetes` finalizer in spec.finalizers) and the
 * `kubernetes.io/metadata.name` label (pkg/apis/core/v1/defaults.go SetDefaults_Namespace), as the
 * namespaces the fake starts with have them (namespace-lifecycle.ts).
 */
function prepareForCreate(type: ResourceType, object: JsonObject): JsonObject {
  // pkg/apis/core/v1/defaults.go SetDefaults_Secret: a Secret without a type is Opaque.
  if (type.group === '' && type.plural === 'secrets') return object.type === undefined || object.type === '' ? { ...object, type: 'Opaque' } : object;
  if (type.group !== '' || type.plural !== 'namespaces') return object;
  const metadata = metadataOf(object);
  const labels = isObject(metadata.labels) ? metadata.labels : {};
  const spec = isObject(object.spec) ? object.spec : {};
  const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers : [];
  return {
    ...object,
    metadata: { ...metadata, labels: { ...labels, 'kubernetes.io/metadata.name': text(metadata.name) } },
    spec: { ...spec, finalizers: finalizers.includes('kubernetes') ? finalizers : [...finalizers, 'kubernetes'] },
    status: { phase: 'Active' },
  };
}

function create(store: ObjectStore, route: Route, request: RestRequest): RestResponse {
  const body = writeBody(request);
  if (!isObject(body) || !isObject(body.metadata)) throw badRequest('the body of the request was in an unknown format');
  const name = text(body.metadata.name);
  if (name === '') throw badRequest('name or generateName is required');
  const namespace = route.namespace ?? '';
  if (route.type.namespaced && body.metadata.namespace !== undefined && body.metadata.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  admitInNamespace(store, route.type, namespace, name);
  if (store.find(route.type, namespace, name)) throw alreadyExists(route.type.plural, route.type.group, name);
  // The server sets these itself; "create cannot set status" (apiextensions customresource
  // strategy.PrepareForCreate) where there is a status subresource.
  const { resourceVersion: _rv, uid: _uid, creationTimestamp: _created, generation: _generation, ...metadata } = body.metadata;
  const { status: _status, ...withoutStatus } = body;
  // rest.BeforeCreate: a cluster-scoped object has no namespace (NamespaceNone, left out of its JSON).
  const { namespace: _namespace, ...clusterScoped } = metadata;
  const { object, warnings } = admitted(
    route,
    request,
    { ...(route.type.status ? withoutStatus : body), metadata: route.type.namespaced ? { ...metadata, namespace } : clusterScoped },
    { how: 'create' },
  );
  return { code: 201, body: shown(route, store.put(route.type, toStored(route, prepareForCreate(route.type, object)))), warnings };
}

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

/** negotiation.NewUnsupportedMediaTypeError: 415, reason UnsupportedMediaType. */
function unsupportedMediaType(message: string): KubeFakeError {
  return new KubeFakeError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'UnsupportedMediaType', code: 415 });
}

/**
 * The patch's media type, checked before anything else as PatchResource does (";charset=" and the
 * like cut off): one the type's route does not take is 415. Server-side apply is taken by the API
 * server but not modelled here: refused, 415, saying so.
 */
function patchTypeOf(route: Route, contentType: string): string {
  const mediaType = contentType.split(';')[0]!.trim();
  const accepted = isBuiltin(route.type) ? BUILTIN_PATCH_TYPES : CUSTOM_PATCH_TYPES;
  if (!accepted.includes(mediaType))
    throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
  if (mediaType === APPLY) throw unsupportedMediaType(`server-side apply (${APPLY}) is not modelled by the kube fake`);
  return mediaType;
}

/** The patched object. */
function applyPatch(route: Route, patchType: string, current: JsonObject, patch: Json): Json {
  if (patchType === JSON_PATCH) return jsonPatch(current, patch);
  if (patchType === MERGE_PATCH) return mergePatch(current, patch);
  return strategicMergePatch(current, patch, patchMetaFor(route.type.group, route.type.kind));
}

/** handlers/patch.go interpretStrategicMergePatchError: 400 for a malformed patch, 422 for what cannot be merged, 500 for the rest. */
function strategicMergePatchFailure(error: StrategicMergePatchError): RestResponse {
  if (error.failure === 'BadRequest') return { code: 400, body: { ...badRequest(error.message).status } };
  if (error.failure === 'Internal') return { code: 500, body: { ...internal(error.message).status } };
  // errors.NewGenericServerResponse(422, "", GroupResource{}, "", message, 0, false).
  return {
    code: 422,
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      details: { causes: [{ reason: 'UnexpectedServerResponse', message: error.message }] },
      code: 422,
    },
  };
}

function patchOrPut(store: ObjectStore, route: Route, name: string, request: RestRequest): RestResponse {
  const namespace = route.namespace ?? '';
  const patchType = request.method === 'PATCH' ? patchTypeOf(route, request.contentType) : undefined;
  const stored = store.get(route.type, namespace, name);
  // Patched and checked in the request's version, as the API server converts before it patches.
  const current = shown(route, stored);
  const body = patchType === undefined ? writeBody(request) : parseBody(request.body);
  const next = patchType === undefined ? body : applyPatch(route, patchType, current, body);
  if (!isObject(next) || !isObject(next.metadata))
    throw badRequest(request.method === 'PUT' ? 'the body of the request was in an unknown format' : 'patch did not produce an object');
  checkVersion(route, name, next, current);
  checkUidUnchanged(route, name, next, current);
  checkNoNewFinalizers(route, name, next, current);
  const write: Write = patchType === undefined ? { how: 'update' } : { how: 'patch', patchType, patch: body, patched: next };
  const { object, warnings } = admitted(
    route,
    request,
    route.subresource === 'status' ? statusOnly(next, current) : keepStatus(route.type, next, current),
    write,
  );
  return { code: 200, body: shown(route, update(store, route, name, toStored(route, object, stored))), warnings };
}

/** The DeleteOptions body (apiserver handlers/delete.go reads the body; an empty one is no options). */
function deleteOptions(body: string): JsonObject {
  if (body.trim() === '') return {};
  const options = parseBody(body);
  if (!isObject(options)) throw badRequest('the body of the request was in an unknown format');
  return options;
}

/**
 * apiserver pkg/registry/rest/delete.go BeforeDelete, which checks DeleteOptions.preconditions
 * before anything else, an object already being deleted included. The GroupResource it names
 * carries the Kind, so the message says `Machine.cluster.x-k8s.io "x"`, not the plural.
 */
function checkPreconditions(route: Route, current: JsonObject, options: JsonObject): void {
  const preconditions = isObject(options.preconditions) ? options.preconditions : {};
  const metadata = metadataOf(current);
  const name = text(metadata.name);
  const { uid, resourceVersion } = preconditions;
  if (typeof uid === 'string' && uid !== metadata.uid) {
    const why = `the UID in the precondition (${uid}) does not match the UID in record (${text(metadata.uid)}). The object might have been deleted and then recreated`;
    throw conflict(route.type.kind, route.type.group, name, why);
  }
  if (typeof resourceVersion === 'string' && resourceVersion !== metadata.resourceVersion) {
    const why = `the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${text(metadata.resourceVersion)}). The object might have been modified`;
    throw conflict(route.type.kind, route.type.group, name, why);
  }
}

function remove(store: ObjectStore, hooks: DeleteHooks, route: Route, name: string, body: string): RestResponse {
  const namespace = route.namespace ?? '';
  const options = deleteOptions(body);
  const current = store.get(route.type, namespace, name);
  checkPreconditions(route, current, options);
  // A graceful deletion stamps the object: answer with it as stamped.
  if (hooks.graceful(route.type, namespace, name)) return { code: 200, body: shown(route, store.get(route.type, namespace, name)) };
  if (finalizersOf(current).length > 0) {
    // Finalizers hold it: stamped for deletion, gone when they are (see update()).
    const metadata = metadataOf(current);
    if (metadata.deletionTimestamp === undefined) Object.assign(metadata, { deletionTimestamp: new Date().toISOString(), deletionGracePeriodSeconds: 0 });
    return { code: 200, body: shown(route, store.put(route.type, current)) };
  }
  const gone = store.remove(route.type, namespace, name);
  return { code: 200, body: route.type.plural === 'pods' ? gone : deletedStatus(route, name, metadataOf(gone).uid) };
}

/**
 * kubectl get's Table (tables.ts) when the Accept header asks for one first, for a list or for one
 * object (a /status GET too: the custom resource StatusREST converts as the main resource does),
 * for the types the fake prints; undefined otherwise, when the object or list itself is answered.
 */
function tableOf(route: Route, request: RestRequest, objects: JsonObject[], resourceVersion: string): JsonObject | undefined {
  if (!wantsTable(request.accept ?? '')) return undefined;
  return tableFor(route.type, route.version, objects, resourceVersion, request.url.searchParams.get('includeObject') ?? '');
}

export function handleRest(store: ObjectStore, hooks: DeleteHooks, request: RestRequest): RestResponse | undefined {
  const route = parsePath(request.url.pathname);
  if (!route || (route.subresource !== undefined && route.subresource !== 'status')) return undefined;
  const namespace = route.namespace ?? '';
  try {
    if (route.name === undefined) {
      if (request.method === 'GET') {
        const fields = fieldFilter(route.type, request.url.searchParams.get('fieldSelector'));
        const items = store
          .list(route.type, route.namespace, request.url.searchParams.get('labelSelector'))
          .filter(fields)
          .map((object) => shown(route, object));
        const table = tableOf(route, request, items, store.resourceVersion);
        if (table) return { code: 200, body: table };
        return {
          code: 200,
          body: { kind: `${route.type.kind}List`, apiVersion: apiVersion(route), metadata: { resourceVersion: store.resourceVersion }, items },
        };
      }
      if (request.method === 'POST') return create(store, route, request);
      return {
        code: 405,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'the server does not allow this method on the requested resource',
          reason: 'MethodNotAllowed',
          code: 405,
        },
      };
    }
    if (route.subresource === 'status' && !route.type.status) return undefined;
    if (request.method === 'GET') {
      const object = shown(route, store.get(route.type, namespace, route.name));
      return { code: 200, body: tableOf(route, request, [object], text(metadataOf(object).resourceVersion)) ?? object };
    }
    if (request.method === 'PATCH' || request.method === 'PUT') return patchOrPut(store, route, route.name, request);
    if (request.method === 'DELETE' && route.subresource === undefined) return remove(store, hooks, route, route.name, request.body);
    return undefined;
  } catch (error) {
    if (error instanceof KubeFakeError) return { code: error.status.code, body: { ...error.status } };
    if (error instanceof StrategicMergePatchError) return strategicMergePatchFailure(error);
    throw error;
  }
}
