// Strategic merge patch (Content-Type application/strategic-merge-patch+json) as the API server
// applies it to a built-in type: apimachinery pkg/util/strategicpatch patch.go
// StrategicMergeMapPatch, i.e. mergeMap with MergeOptions{MergeParallelList: true,
// IgnoreUnmatchedNulls: true}, ported function by function (the names below are Go's). Maps merge
// as in a JSON merge patch; a list merges only where the Go type's field carries
// `patchStrategy:"merge"`, lists of objects by its `patchMergeKey`; every other list is replaced.
// The directives are those of the API conventions
// (https://github.com/kubernetes/community/blob/master/contributors/devel/sig-api-machinery/strategic-merge-patch.md):
// `$patch: replace|delete|merge`, `$retainKeys`, `$setElementOrder/<list>` and
// `$deleteFromPrimitiveList/<list>`. A custom resource has no Go type, so no patch metadata: the
// API server refuses the content type for it (415), which routes.ts answers.
//
// The patch metadata (PATCH_META) is the struct tags of k8s.io/api v0.35.7 (core/v1, apps/v1) and
// apimachinery meta/v1 for the types the fake serves; apiextensions/v1 and rbac/v1 carry none. A
// field not listed has no tag: its list is replaced, its object merged. (Go also refuses to descend
// into a field its struct does not have, or into a map's values as a struct; neither is modelled.)
import { type Json, type JsonObject, isObject } from './patch.ts';

/** One field's struct tags, and the patch metadata of its type (its items', for a list). */
export interface FieldMeta {
  /** `patchStrategy`, split on commas: merge, retainKeys, replace. */
  strategies?: readonly string[];
  patchMergeKey?: string;
  schema?: PatchSchema;
}

/** The tagged fields of one Go struct type. */
export type PatchSchema = Readonly<Record<string, FieldMeta>>;

/** Why a patch failed, sorted as handlers/patch.go interpretStrategicMergePatchError sorts mergepatch's errors. */
export type SmpFailure = 'BadRequest' | 'Unprocessable' | 'Internal';

export class StrategicMergePatchError extends Error {
  readonly failure: SmpFailure;
  constructor(failure: SmpFailure, message: string) {
    super(message);
    this.name = 'StrategicMergePatchError';
    this.failure = failure;
  }
}

// apimachinery pkg/util/mergepatch errors.go: the sentinel errors the API server answers 400 or 422
// for; any other error is a plain Go error, 500.
const noListOfLists = () => new StrategicMergePatchError('Unprocessable', 'lists of lists are not supported');
const badPrimitiveListFormat = () => new StrategicMergePatchError('BadRequest', 'invalid patch format of primitive list');
const badRetainKeysFormat = () => new StrategicMergePatchError('BadRequest', 'invalid patch format of retainKeys');
const badSetElementOrderFormat = () => new StrategicMergePatchError('BadRequest', 'invalid patch format of setElementOrder list');
const internal = (message: string) => new StrategicMergePatchError('Internal', message);

/** Go's %v of a decoded JSON value: map[k:v ...] with sorted keys, [a b], <nil>. */
export function goValue(value: Json | undefined): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (isObject(value))
    return `map[${Object.keys(value)
      .sort()
      .map((key) => `${key}:${goValue(value[key])}`)
      .join(' ')}]`;
  return String(value);
}

/** reflect.TypeOf's name for a decoded JSON value (UnmarshalCaseSensitivePreserveInts: integers are int64). */
function goType(value: Json | undefined): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return '[]interface {}';
  if (isObject(value)) return 'map[string]interface {}';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  return typeof value === 'string' ? 'string' : 'bool';
}

const errNoMergeKey = (m: JsonObject, key: string) => internal(`map: ${goValue(m)} does not contain declared merge key: ${key}`);
const errBadArgType = (expected: string, actual: Json | undefined) => internal(`expected a ${expected}, but received a ${goType(actual)}`);
const errBadPatchType = (t: Json | undefined, m: JsonObject) => internal(`unknown patch type: ${goValue(t)} in map: ${goValue(m)}`);

const DIRECTIVE = '$patch';
const DELETE = 'delete';
const REPLACE = 'replace';
const MERGE = 'merge';
const RETAIN_KEYS_STRATEGY = 'retainKeys';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

const OBJECT_META: PatchSchema = {
  ownerReferences: { strategies: [MERGE], patchMergeKey: 'uid' },
  finalizers: { strategies: [MERGE] },
};

const CONTAINER: PatchSchema = {
  ports: { strategies: [MERGE], patchMergeKey: 'containerPort' },
  env: { strategies: [MERGE], patchMergeKey: 'name' },
  volumeMounts: { strategies: [MERGE], patchMergeKey: 'mountPath' },
  volumeDevices: { strategies: [MERGE], patchMergeKey: 'devicePath' },
};

const POD_SPEC: PatchSchema = {
  volumes: { strategies: [MERGE, RETAIN_KEYS_STRATEGY], patchMergeKey: 'name' },
  initContainers: { strategies: [MERGE], patchMergeKey: 'name', schema: CONTAINER },
  containers: { strategies: [MERGE], patchMergeKey: 'name', schema: CONTAINER },
  ephemeralContainers: { strategies: [MERGE], patchMergeKey: 'name', schema: CONTAINER },
  imagePullSecrets: { strategies: [MERGE], patchMergeKey: 'name' },
  hostAliases: { strategies: [MERGE], patchMergeKey: 'ip' },
  topologySpreadConstraints: { strategies: [MERGE], patchMergeKey: 'topologyKey' },
  schedulingGates: { strategies: [MERGE], patchMergeKey: 'name' },
  resourceClaims: { strategies: [MERGE, RETAIN_KEYS_STRATEGY], patchMergeKey: 'name' },
};

const CONTAINER_STATUS: PatchSchema = {
  volumeMounts: { strategies: [MERGE], patchMergeKey: 'mountPath' },
  allocatedResourcesStatus: { strategies: [MERGE], patchMergeKey: 'name' },
};

const POD_STATUS: PatchSchema = {
  conditions: { strategies: [MERGE], patchMergeKey: 'type' },
  hostIPs: { strategies: [MERGE], patchMergeKey: 'ip' },
  podIPs: { strategies: [MERGE], patchMergeKey: 'ip' },
  resourceClaimStatuses: { strategies: [MERGE, RETAIN_KEYS_STRATEGY], patchMergeKey: 'name' },
  initContainerStatuses: { schema: CONTAINER_STATUS },
  containerStatuses: { schema: CONTAINER_STATUS },
  ephemeralContainerStatuses: { schema: CONTAINER_STATUS },
};

const conditionsByType: PatchSchema = { conditions: { strategies: [MERGE], patchMergeKey: 'type' } };

const POD_TEMPLATE_SPEC: PatchSchema = { metadata: { schema: OBJECT_META }, spec: { schema: POD_SPEC } };

/** The patch metadata of each built-in kind the fake serves, by `<group>/<Kind>`. */
export const PATCH_META: Readonly<Record<string, PatchSchema>> = {
  '/Namespace': { metadata: { schema: OBJECT_META }, status: { schema: conditionsByType } },
  '/Node': {
    metadata: { schema: OBJECT_META },
    spec: { schema: { podCIDRs: { strategies: [MERGE] } } },
    status: { schema: { ...conditionsByType, addresses: { strategies: [MERGE], patchMergeKey: 'type' } } },
  },
  '/Pod': { metadata: { schema: OBJECT_META }, spec: { schema: POD_SPEC }, status: { schema: POD_STATUS } },
  '/Secret': { metadata: { schema: OBJECT_META } },
  '/Event': { metadata: { schema: OBJECT_META } },
  '/ServiceAccount': { metadata: { schema: OBJECT_META }, secrets: { strategies: [MERGE], patchMergeKey: 'name' } },
  '/Service': {
    metadata: { schema: OBJECT_META },
    spec: { schema: { ports: { strategies: [MERGE], patchMergeKey: 'port' } } },
    status: { schema: conditionsByType },
  },
  'apps/Deployment': {
    metadata: { schema: OBJECT_META },
    spec: { schema: { template: { schema: POD_TEMPLATE_SPEC }, strategy: { strategies: [RETAIN_KEYS_STRATEGY] } } },
    status: { schema: conditionsByType },
  },
  'rbac.authorization.k8s.io/ClusterRole': { metadata: { schema: OBJECT_META } },
  'rbac.authorization.k8s.io/ClusterRoleBinding': { metadata: { schema: OBJECT_META } },
  'rbac.authorization.k8s.io/Role': { metadata: { schema: OBJECT_META } },
  'rbac.authorization.k8s.io/RoleBinding': { metadata: { schema: OBJECT_META } },
  'apiextensions.k8s.io/CustomResourceDefinition': { metadata: { schema: OBJECT_META } },
};

/** The patch metadata of a built-in kind, or undefined for a type without a Go type here (a custom resource). */
export function patchMetaFor(group: string, kind: string): PatchSchema | undefined {
  return PATCH_META[`${group}/${kind}`];
}

interface Lookup {
  schema: PatchSchema | undefined;
  strategies: readonly string[];
  patchMergeKey: string;
}

/** LookupPatchMetadataForStruct / ForSlice: the field's tags and its (items') type. */
function lookup(schema: PatchSchema | undefined, key: string): Lookup {
  const field = schema?.[key];
  return { schema: field?.schema, strategies: field?.strategies ?? [], patchMergeKey: field?.patchMergeKey ?? '' };
}

/** extractRetainKeysPatchStrategy: the strategy other than retainKeys ('' for none). */
function otherStrategy(strategies: readonly string[]): string {
  if (strategies.length === 0) return '';
  if (strategies.length === 1) return strategies[0] === RETAIN_KEYS_STRATEGY ? '' : strategies[0]!;
  if (strategies.length === 2 && strategies[0] === RETAIN_KEYS_STRATEGY) return strategies[1]!;
  if (strategies.length === 2 && strategies[1] === RETAIN_KEYS_STRATEGY) return strategies[0]!;
  throw internal(`unexpected patch strategy: [${strategies.join(' ')}]`);
}

type Kind = 'map' | 'slice' | 'scalar' | 'null';
const kindOf = (value: Json | undefined): Kind =>
  value === null || value === undefined ? 'null' : Array.isArray(value) ? 'slice' : isObject(value) ? 'map' : 'scalar';

/** reflect.TypeOf equality, for JSON: objects, arrays, strings, numbers and booleans are each their own type. */
const sameGoType = (a: Json | undefined, b: Json | undefined): boolean => goType(a) === goType(b) || (typeof a === 'number' && typeof b === 'number');

/**
 * Applies `patch` (a strategic merge patch) to `original` with the patch metadata `schema`, as
 * StrategicMergeMapPatchUsingLookupPatchMeta does. Neither argument is modified. Throws a
 * StrategicMergePatchError for a patch the API server refuses.
 */
export function strategicMergePatch(original: JsonObject, patch: Json, schema: PatchSchema | undefined): JsonObject {
  // handlers/patch.go strategicPatchObject decodes the body into a map[string]interface{} first
  // (null leaves it empty); anything else is a 400 with encoding/json's words.
  if (patch === null) return structuredClone(original);
  if (!isObject(patch)) {
    const what = Array.isArray(patch) ? 'array' : typeof patch === 'boolean' ? 'bool' : typeof patch;
    throw new StrategicMergePatchError('BadRequest', `json: cannot unmarshal ${what} into Go value of type map[string]interface {}`);
  }
  return mergeMap(structuredClone(original), structuredClone(patch), schema);
}

/** Handles `$patch` in a map: replace takes the patch as it is, delete leaves an empty map. */
function handleDirectiveInMergeMap(directive: Json | undefined, patch: JsonObject): JsonObject {
  if (directive === REPLACE) {
    delete patch[DIRECTIVE];
    return patch;
  }
  if (directive === DELETE) return {};
  throw errBadPatchType(directive, patch);
}

function mergeMap(original: JsonObject | undefined, patch: JsonObject, schema: PatchSchema | undefined): JsonObject {
  if (DIRECTIVE in patch) return handleDirectiveInMergeMap(patch[DIRECTIVE], patch);
  const target: JsonObject = original ?? {};
  applyRetainKeysDirective(target, patch);
  mergePatchIntoOriginal(target, patch, schema);
  for (const [rawKey, patchV] of Object.entries(patch)) {
    let key = rawKey;
    // preprocessDeletionListForMerging: a parallel list of primitives to delete from `<key>`.
    const isDeleteList = rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST);
    if (isDeleteList) key = extractKey(rawKey, DELETE_FROM_PRIMITIVE_LIST);
    if (patchV === null) {
      // IgnoreUnmatchedNulls: a null deletes the key, and is not kept.
      delete target[key];
      continue;
    }
    if (!(key in target)) {
      if (!isDeleteList) keepWithoutDirectives(target, key, discardNullValues(patchV));
      continue;
    }
    if (!sameGoType(target[key], patchV)) {
      if (!isDeleteList) keepWithoutDirectives(target, key, discardNullValues(patchV));
      continue;
    }
    const kind = kindOf(patchV);
    if (kind === 'map') {
      const field = lookup(schema, key);
      const strategy = otherStrategy(field.strategies);
      target[key] = strategy === REPLACE ? patchV : mergeMap(target[key] as JsonObject, patchV as JsonObject, field.schema);
    } else if (kind === 'slice') {
      const field = lookup(schema, key);
      const strategy = otherStrategy(field.strategies);
      // mergeSliceHandler: a delete list is handled the same whatever the field's strategy.
      target[key] =
        strategy === MERGE || isDeleteList ? mergeSlice(target[key] as Json[], patchV as Json[], field.schema, field.patchMergeKey, isDeleteList) : patchV;
    } else keepWithoutDirectives(target, key, patchV);
  }
  return target;
}

/** `original[key] = removeDirectives(value)`, or the key gone when the value is itself a directive. */
function keepWithoutDirectives(target: JsonObject, key: string, value: Json): void {
  const [kept, keep] = removeDirectives(value);
  if (keep) target[key] = kept;
  else delete target[key];
}

/** discardNullValuesFromPatch: nulls in a value taken whole mean nothing (IgnoreUnmatchedNulls). */
function discardNullValues(value: Json): Json {
  if (Array.isArray(value)) return value.map(discardNullValues);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).flatMap(([key, child]) => (child === null ? [] : [[key, discardNullValues(child)]])));
}

/** removeDirectives: a map that holds `$patch` is dropped (false); maps and lists inside are cleaned. */
function removeDirectives(value: Json): [Json, boolean] {
  if (Array.isArray(value)) return [value.flatMap((item) => (([kept, keep]) => (keep ? [kept] : []))(removeDirectives(item))), true];
  if (!isObject(value)) return [value, true];
  if (DIRECTIVE in value) return [null, false];
  const kept: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    const [cleaned, keep] = removeDirectives(child);
    if (keep) kept[key] = cleaned;
  }
  return [kept, true];
}

/** extractKey: `<prefix>/<key>`, or the prefix's own format error. */
function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw prefix === DELETE_FROM_PRIMITIVE_LIST ? badPrimitiveListFormat() : badSetElementOrderFormat();
  return key.slice(slash + 1);
}

/**
 * applyRetainKeysDirective: `$retainKeys` lists the keys the map keeps; every other key of the
 * original goes, and a key the patch sets must be among them.
 */
function applyRetainKeysDirective(original: JsonObject, patch: JsonObject): void {
  if (!(RETAIN_KEYS in patch)) return;
  const retain = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(retain)) throw badRetainKeysFormat();
  const kept = new Set(retain.map((key) => JSON.stringify(key)));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!kept.has(JSON.stringify(key))) throw badRetainKeysFormat();
  }
  for (const key of Object.keys(original)) if (!kept.has(JSON.stringify(key))) delete original[key];
}

/**
 * mergePatchIntoOriginal: each `$setElementOrder/<list>` merges its list now and puts the result in
 * the order it gives (then the patch's, then the live object's), so the loop in mergeMap skips it.
 */
function mergePatchIntoOriginal(original: JsonObject, patch: JsonObject, schema: PatchSchema | undefined): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const order = patch[key];
    delete patch[key];
    if (!Array.isArray(order)) throw errBadArgType('[]interface {}', order);
    const listKey = extractKey(key, SET_ELEMENT_ORDER);
    const foundOriginal = listKey in original;
    const foundPatch = listKey in patch;
    const originalList = original[listKey];
    const patchList = patch[listKey];
    if (foundOriginal && !Array.isArray(originalList)) throw errBadArgType('[]interface {}', originalList);
    if (foundPatch && !Array.isArray(patchList)) throw errBadArgType('[]interface {}', patchList);
    const field = lookup(schema, listKey);
    const strategy = otherStrategy(field.strategies);
    const mergeKey = field.patchMergeKey;
    validatePatchWithSetOrderList((patchList as Json[] | undefined) ?? [], order, mergeKey);
    let merged: Json[];
    if (foundOriginal && !foundPatch) merged = originalList as Json[];
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchList!)[0] as Json[];
    else if (foundOriginal && foundPatch)
      merged = strategy === MERGE ? mergeSlice(originalList as Json[], patchList as Json[], field.schema, mergeKey, false) : (patchList as Json[]);
    else continue;
    const [patchItems, serverOnly] = mergeKey === '' ? partitionPrimitives(merged, order) : partitionMaps(merged, order, mergeKey);
    const kind = sliceElementKind((originalList as Json[] | undefined) ?? [], (patchList as Json[] | undefined) ?? []);
    original[listKey] = normalizeElementOrder(patchItems, serverOnly, order, (originalList as Json[] | undefined) ?? [], mergeKey, kind);
    delete patch[listKey];
  }
}

/** validatePatchWithSetOrderList: the patch's items (but deletions) appear in the order list, in its order. */
function validatePatchWithSetOrderList(patchList: Json[], order: Json[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey === '' ? patchList : extractToDeleteItems(patchList)[0];
  let patchIndex = 0;
  let orderIndex = 0;
  while (patchIndex < nonDelete.length && orderIndex < order.length) {
    if (isObject(nonDelete[patchIndex]) && DIRECTIVE in (nonDelete[patchIndex] as JsonObject)) {
      patchIndex++;
      continue;
    }
    if (mergeKeyValueEqual(nonDelete[patchIndex]!, order[orderIndex]!, mergeKey)) patchIndex++;
    orderIndex++;
  }
  if (patchIndex < nonDelete.length && orderIndex >= order.length)
    throw internal(`The order in patch list:\n${goValue(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goValue(order)}\n`);
}

function mergeKeyValueEqual(left: Json, right: Json, mergeKey: string): boolean {
  if (mergeKey === '') return left === right;
  if (!isObject(left)) throw errBadArgType('map[string]interface {}', left);
  if (!isObject(right)) throw errBadArgType('map[string]interface {}', right);
  if (!(mergeKey in left)) throw errNoMergeKey(left, mergeKey);
  if (!(mergeKey in right)) throw errNoMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}

/** sliceElementType: every item of the lists is of one type, and not a list. */
function sliceElementKind(...lists: Json[][]): Kind {
  let first: Json | undefined;
  let seen = false;
  for (const list of lists) {
    for (const item of list) {
      if (!seen) {
        [first, seen] = [item, true];
        if (Array.isArray(item)) throw noListOfLists();
      } else if (!sameGoType(first, item)) throw internal(`list element types are not identical: [${lists.map(goValue).join(' ')}]`);
    }
  }
  if (!seen) throw internal('no elements in any of the given slices');
  return kindOf(first);
}

function mergeSlice(original: Json[], patch: Json[], schema: PatchSchema | undefined, mergeKey: string, isDeleteList: boolean): Json[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementKind(original, patch);
  let merged: Json[];
  // After the special elements, Go's `original` and `patch` are the lists they left.
  let serverOrder = original;
  let patchOrder = patch;
  if (kind !== 'map') {
    // A parallel deletion list takes its items out; otherwise the union, without duplicates.
    if (isDeleteList) return deleteFromSlice(original, patch);
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (mergeKey === '') throw internal('cannot merge lists without merge key for struct');
    [serverOrder, patchOrder] = mergeSliceWithSpecialElements(original, patch, mergeKey);
    merged = mergeSliceWithoutSpecialElements(serverOrder, patchOrder, mergeKey, schema);
  }
  const [patchItems, serverOnly] = mergeKey === '' ? partitionPrimitives(merged, patchOrder) : partitionMaps(merged, patchOrder, mergeKey);
  return normalizeElementOrder(patchItems, serverOnly, patchOrder, serverOrder, mergeKey, kind);
}

/**
 * mergeSliceWithSpecialElements: `{$patch: delete, <key>: v}` deletes the items with that key,
 * `{$patch: replace}` makes the list the patch's items; `$patch: merge` is refused.
 */
function mergeSliceWithSpecialElements(original: Json[], patch: Json[], mergeKey: string): [Json[], Json[]] {
  let kept = [...original];
  const rest: Json[] = [];
  let replace = false;
  for (const item of patch) {
    const map = item as JsonObject;
    if (!(DIRECTIVE in map)) {
      rest.push(item);
      continue;
    }
    const directive = map[DIRECTIVE];
    if (directive === DELETE) {
      if (!(mergeKey in map)) throw errNoMergeKey(map, mergeKey);
      kept = kept.filter((candidate) => !(isObject(candidate) && candidate[mergeKey] === map[mergeKey]));
    } else if (directive === REPLACE) replace = true;
    else if (directive === MERGE) throw internal('merging lists cannot yet be specified in the patch');
    else throw errBadPatchType(directive, map);
  }
  return replace ? [rest, []] : [kept, rest];
}

/** mergeSliceWithoutSpecialElements: an item with the key of an original one merges into it; a new one is appended. */
function mergeSliceWithoutSpecialElements(original: Json[], patch: Json[], mergeKey: string, schema: PatchSchema | undefined): Json[] {
  const result = [...original];
  for (const item of patch) {
    const map = item as JsonObject;
    if (!(mergeKey in map)) throw errNoMergeKey(map, mergeKey);
    const index = findByKey(result, mergeKey, map[mergeKey]!);
    if (index >= 0) result[index] = mergeMap(result[index] as JsonObject, map, schema);
    else result.push(item);
  }
  return result;
}

/** findMapInSliceBasedOnKeyValue's index, or -1. */
function findByKey(list: Json[], mergeKey: string, value: Json): number {
  for (const [index, item] of list.entries()) {
    if (!isObject(item)) throw internal(`value for key ${index} is not a map`);
    if (mergeKey in item && item[mergeKey] === value) return index;
  }
  return -1;
}

function deleteFromSlice(current: Json[], toDelete: Json[]): Json[] {
  return current.filter((item) => !toDelete.includes(item));
}

/** deduplicateScalars, Go's in-place algorithm: a duplicate is overwritten by the last item. */
function deduplicateScalars(list: Json[]): Json[] {
  const s = [...list];
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length]!;
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

function partitionPrimitives(list: Json[], by: Json[]): [Json[], Json[]] {
  return [list.filter((item) => by.includes(item)), list.filter((item) => !by.includes(item))];
}

function partitionMaps(list: Json[], by: Json[], mergeKey: string): [Json[], Json[]] {
  const inPatch: Json[] = [];
  const serverOnly: Json[] = [];
  for (const item of list) {
    if (!isObject(item)) throw errBadArgType('map[string]interface {}', item);
    if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
    (findByKey(by, mergeKey, item[mergeKey]!) >= 0 ? inPatch : serverOnly).push(item);
  }
  return [inPatch, serverOnly];
}

/** index: where `value` (by merge key, for maps) is in `list`, or -1. */
function indexOf(list: Json[], value: Json, mergeKey: string, kind: Kind): number {
  const keyOf = (item: Json | undefined): Json | undefined => (kind === 'map' ? (isObject(item) ? item[mergeKey] : undefined) : item);
  const wanted = keyOf(value);
  return list.findIndex((item) => keyOf(item) === wanted);
}

function extractToDeleteItems(list: Json[]): [Json[], Json[]] {
  const kept: Json[] = [];
  const toDelete: Json[] = [];
  for (const item of list) {
    if (!isObject(item)) throw errBadArgType('map[string]interface {}', item);
    (item[DIRECTIVE] === DELETE ? toDelete : kept).push(item);
  }
  return [kept, toDelete];
}

/** normalizeSliceOrder: sorted by position in `order` (Go's sort.SliceStable; an insertion sort for the short lists of objects). */
function normalizeSliceOrder(toSort: Json[], order: Json[], mergeKey: string, kind: Kind): Json[] {
  let items = [...toSort];
  let toDelete: Json[] = [];
  if (kind === 'map') {
    for (const item of [...items, ...order]) {
      if (!isObject(item)) throw errBadArgType('map[string]interface {}', item);
      if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
    }
    [items, toDelete] = extractToDeleteItems(items);
  }
  const less = (a: Json, b: Json): boolean => {
    const ia = indexOf(order, a, mergeKey, kind);
    const ib = indexOf(order, b, mergeKey, kind);
    return ia >= 0 && ib >= 0 ? ia < ib : true;
  };
  for (let i = 1; i < items.length; i++) {
    for (let j = i; j > 0 && less(items[j]!, items[j - 1]!); j--) [items[j], items[j - 1]] = [items[j - 1]!, items[j]!];
  }
  return [...items, ...toDelete];
}

/**
 * normalizeElementOrder and mergeSortedSlice: the patch's items in the patch's order, the live
 * object's other items in theirs, interleaved where the live order places them.
 */
function normalizeElementOrder(patchItems: Json[], serverOnly: Json[], patchOrder: Json[], serverOrder: Json[], mergeKey: string, kind: Kind): Json[] {
  const right = normalizeSliceOrder(patchItems, patchOrder, mergeKey, kind);
  const left = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  const merged: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) merged.push(right[j++]!);
    else if (j >= right.length) merged.push(left[i++]!);
    else {
      const li = indexOf(serverOrder, left[i]!, mergeKey, kind);
      const ri = indexOf(serverOrder, right[j]!, mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) merged.push(left[i++]!);
      else merged.push(right[j++]!);
    }
  }
  return merged;
}
