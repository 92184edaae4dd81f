// REST routing for the kube fake: GET one, LIST, PATCH and DELETE on the stored resource types.
import { type Json, type JsonObject, isObject, jsonPatch, mergePatch } from './patch.ts';
import { KubeFakeError, badRequest } from './status.ts';
import { type ObjectStore, type ResourceType, metadataOf, resourceType } from './store.ts';

export interface RestRequest {
  method: string;
  url: URL;
  contentType: string;
  body: string;
}

export interface RestResponse {
  code: number;
  body: Json;
}

interface Route {
  type: ResourceType;
  version: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

function parsePath(pathname: string): Route | undefined {
  const parts = pathname.split('/').filter((part) => part !== '').map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) [group, version, rest] = ['', parts[1]!, parts.slice(2)];
  else if (parts[0] === 'apis' && parts.length >= 3) [group, version, rest] = [parts[1]!, parts[2]!, parts.slice(3)];
  else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) [namespace, rest] = [rest[1], rest.slice(2)];
  const type = resourceType(group, rest[0] ?? '');
  if (!type) return undefined;
  return { type, version, namespace, name: rest[1], subresource: rest[2] };
}

function apiVersion(route: Route): string {
  return route.type.group === '' ? route.version : `${route.type.group}/${route.version}`;
}

export interface DeleteHooks {
  /** Machines: stamped with a deletionTimestamp, then gone later, as CAPI drains and deletes. */
  graceful(type: ResourceType, namespace: string, name: string): boolean;
}

function deletedStatus(route: Route, name: string): JsonObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name, ...(route.type.group === '' ? {} : { group: route.type.group }), kind: route.type.plural, uid: '' },
  };
}

function parseBody(body: string): Json {
  try {
    return JSON.parse(body) as Json;
  } catch {
    throw badRequest('the body of the request was in an unknown format');
  }
}

export function handleRest(store: ObjectStore, hooks: DeleteHooks, request: RestRequest): RestResponse | undefined {
  const route = parsePath(request.url.pathname);
  if (!route || route.subresource !== undefined) return undefined;
  const namespace = route.namespace ?? '';
  try {
    if (request.method === 'GET' && route.name === undefined) {
      const items = store.list(route.type, route.namespace, request.url.searchParams.get('labelSelector'));
      return { code: 200, body: { kind: `${route.type.kind}List`, apiVersion: apiVersion(route), metadata: { resourceVersion: store.resourceVersion }, items } };
    }
    if (route.name === undefined) return { code: 405, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server does not allow this method on the requested resource', reason: 'MethodNotAllowed', code: 405 } };
    if (request.method === 'GET') return { code: 200, body: store.get(route.type, namespace, route.name) };
    if (request.method === 'PATCH') {
      const current = store.get(route.type, namespace, route.name);
      const patch = parseBody(request.body);
      const patched = request.contentType.startsWith('application/json-patch+json') ? jsonPatch(current, patch) : mergePatch(current, patch);
      if (!isObject(patched)) throw badRequest('patch did not produce an object');
      metadataOf(patched).name = route.name;
      return { code: 200, body: store.put(route.type, patched) };
    }
    if (request.method === 'DELETE') {
      if (hooks.graceful(route.type, namespace, route.name)) return { code: 200, body: store.get(route.type, namespace, route.name) };
      const gone = store.remove(route.type, namespace, route.name);
      return { code: 200, body: route.type.plural === 'pods' ? gone : deletedStatus(route, route.name) };
    }
    return undefined;
  } catch (error) {
    if (error instanceof KubeFakeError) return { code: error.status.code, body: { ...error.status } };
    throw error;
  }
}
