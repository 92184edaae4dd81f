// The two patch bodies client-node sends: JSON patch (its default content type) and merge patch.
import { badRequest } from './status.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string field, or '' when it is missing or not a string. */
export function text(value: Json | undefined): string {
  return typeof value === 'string' ? value : '';
}

/** RFC 7386: null deletes, objects merge, everything else replaces. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

interface JsonPatchOp {
  op: string;
  path: string;
  value?: Json;
}

function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** RFC 6902 add/replace/remove/test, enough for annotations and labels. */
export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest('json patch must be an array of operations');
  let doc: Json = structuredClone(target);
  for (const raw of ops) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') throw badRequest('invalid json patch operation');
    const op: JsonPatchOp = { op: raw.op, path: raw.path, ...(raw.value === undefined ? {} : { value: raw.value }) };
    doc = applyOp(doc, op);
  }
  return doc;
}

function applyOp(doc: Json, op: JsonPatchOp): Json {
  const parts = decodePointer(op.path);
  const last = parts.pop();
  if (last === undefined) return op.op === 'remove' ? null : (op.value ?? null);
  let parent: Json = doc;
  for (const part of parts) {
    const next: Json | undefined = Array.isArray(parent) ? parent[Number(part)] : isObject(parent) ? parent[part] : undefined;
    if (next === undefined) throw badRequest(`json patch path ${op.path} does not exist`);
    parent = next;
  }
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (op.op === 'add') parent.splice(index, 0, op.value ?? null);
    else if (op.op === 'replace') parent[index] = op.value ?? null;
    else if (op.op === 'remove') parent.splice(index, 1);
    else if (op.op === 'test' && JSON.stringify(parent[index]) !== JSON.stringify(op.value)) throw badRequest(`json patch test failed at ${op.path}`);
    return doc;
  }
  if (!isObject(parent)) throw badRequest(`json patch path ${op.path} does not exist`);
  if (op.op === 'add' || op.op === 'replace') parent[last] = op.value ?? null;
  else if (op.op === 'remove') {
    if (!(last in parent)) throw badRequest(`json patch path ${op.path} does not exist`);
    delete parent[last];
  } else if (op.op === 'test') {
    if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) throw badRequest(`json patch test failed at ${op.path}`);
  } else throw badRequest(`json patch op ${op.op} is not supported`);
  return doc;
}
