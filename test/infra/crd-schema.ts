// CRD openAPIV3Schema checks for tests: the structural-schema rules the API server enforces on a CRD,
// and a translation to plain JSON Schema so a real validator (ajv) can stand in for the API server's
// validation of objects. Schemas here are in wire form (`enum`, `x-kubernetes-list-type`), as written
// in YAML and as Cluster API vendors them.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

export type Schema = { [key: string]: unknown };

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every sub-schema of `node` with its path, `node` first. */
export function* walkSchema(node: Schema, path = ''): Generator<[string, Schema]> {
  yield [path || '.', node];
  for (const [name, child] of Object.entries(isSchema(node.properties) ? node.properties : {}))
    if (isSchema(child)) yield* walkSchema(child, `${path}.${name}`);
  if (isSchema(node.items)) yield* walkSchema(node.items, `${path}[]`);
  if (isSchema(node.additionalProperties)) yield* walkSchema(node.additionalProperties, `${path}{}`);
  for (const key of ['anyOf', 'allOf', 'oneOf'] as const) {
    const list = node[key];
    if (Array.isArray(list)) for (const [i, child] of list.entries()) if (isSchema(child)) yield* walkSchema(child, `${path}<${key}${i}>`);
  }
}

/**
 * Structural-schema violations (apiextensions-apiserver pkg/apis/apiextensions/validation and
 * pkg/apiserver/schema): a type on every node (int-or-string and preserve-unknown-fields nodes
 * excepted, and the branches of anyOf/allOf/oneOf, which must not carry one), properties and
 * additionalProperties never together, no `uniqueItems: true` ("runtime complexity becomes
 * quadratic": use `x-kubernetes-list-type: set`), no `additionalProperties: false`, one schema for
 * `items`.
 */
export function structuralProblems(root: Schema): string[] {
  const problems: string[] = [];
  const branches = new Set<Schema>();
  for (const [path, node] of walkSchema(root)) {
    for (const key of ['anyOf', 'allOf', 'oneOf'] as const)
      if (Array.isArray(node[key])) for (const child of node[key] as unknown[]) if (isSchema(child)) branches.add(child);
    const typeless = node['x-kubernetes-int-or-string'] === true || node['x-kubernetes-preserve-unknown-fields'] === true;
    if (!branches.has(node) && node.type === undefined && !typeless) problems.push(`${path}: no type`);
    if (node.properties !== undefined && node.additionalProperties !== undefined) problems.push(`${path}: properties and additionalProperties together`);
    if (node.uniqueItems === true) problems.push(`${path}: uniqueItems: true`);
    if (node.additionalProperties === false) problems.push(`${path}: additionalProperties: false`);
    if (Array.isArray(node.items)) problems.push(`${path}: items is a list`);
    if (node.type === 'array' && !isSchema(node.items)) problems.push(`${path}: array without items`);
  }
  return problems;
}

/** The sub-schema a printer column's simple JSONPath (`.status.phase`) names, if any. */
export function schemaAt(root: Schema, jsonPath: string): Schema | undefined {
  let node: Schema | undefined = root;
  for (const part of jsonPath.replace(/^\./, '').split('.')) {
    const properties: unknown = node?.properties;
    node = isSchema(properties) && isSchema(properties[part]) ? properties[part] : undefined;
  }
  return node;
}

/**
 * Kubernetes' schema as JSON Schema for ajv. The x-kubernetes-* keywords become what they mean:
 * int-or-string an anyOf (when the schema lacks it), a `set` list uniqueItems (which the API server
 * enforces for it); other list types, map types and CEL rules (x-kubernetes-validations) are not
 * checked. Objects with properties are closed (`additionalProperties: false`) unless they preserve
 * unknown fields: the API server drops unknown fields, and refuses them when asked to be strict, as
 * `kubectl apply` is by default (--validate=strict), so a misspelled field is an error here.
 */
export function toJsonSchema(node: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-') || key === 'nullable') continue;
    if (key === 'properties' && isSchema(value))
      out.properties = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, isSchema(child) ? toJsonSchema(child) : child]));
    else if ((key === 'items' || key === 'additionalProperties' || key === 'not') && isSchema(value)) out[key] = toJsonSchema(value);
    else if ((key === 'anyOf' || key === 'allOf' || key === 'oneOf') && Array.isArray(value))
      out[key] = (value as unknown[]).map((child) => (isSchema(child) ? toJsonSchema(child) : child));
    else out[key] = value;
  }
  if (node['x-kubernetes-int-or-string'] === true && out.anyOf === undefined) out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  if (node['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  if (node.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  if (out.properties !== undefined && out.additionalProperties === undefined && node['x-kubernetes-preserve-unknown-fields'] !== true)
    out.additionalProperties = false;
  return out;
}

/** The root fields the API server keeps whatever the schema says (TypeMeta; ObjectMeta is pruned by its own type, not here). */
const IMPLICIT_ROOT_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * What the API server does with unknown fields when it does not refuse them (fieldValidation Ignore
 * or Warn; Warn is the default for a client that does not ask for Strict, as controller-runtime's
 * client, and so Cluster API's MHC, does not): it prunes them, on every request and again on every
 * read from etcd, so objects stored under an older schema lose them too (KEP-2332 "Pruning for
 * Custom Resources": a field not named by `properties` is removed, unless the node has a schema-valued
 * `additionalProperties` or `x-kubernetes-preserve-unknown-fields`). Returns the pruned copy and the
 * dropped fields as the API server's warnings name them (`unknown field "spec.paths"`).
 */
export function pruneUnknownFields(root: Schema, object: unknown): { pruned: unknown; unknown: string[] } {
  const unknown: string[] = [];
  const prune = (node: Schema, value: unknown, at: string): unknown => {
    if (Array.isArray(value)) return isSchema(node.items) ? value.map((item, i) => prune(node.items as Schema, item, `${at}[${i}]`)) : value;
    if (!isSchema(value)) return value;
    const field = (name: string) => (at ? `${at}.${name}` : name);
    const { additionalProperties } = node;
    if (isSchema(additionalProperties))
      return Object.fromEntries(Object.entries(value).map(([name, child]) => [name, prune(additionalProperties, child, field(name))]));
    const properties = isSchema(node.properties) ? node.properties : {};
    const kept: Schema = {};
    for (const [name, child] of Object.entries(value)) {
      const schema = properties[name];
      if (at === '' && IMPLICIT_ROOT_FIELDS.has(name)) kept[name] = child;
      else if (isSchema(schema)) kept[name] = prune(schema, child, field(name));
      else if (node['x-kubernetes-preserve-unknown-fields'] === true) kept[name] = child;
      else unknown.push(field(name));
    }
    return kept;
  };
  return { pruned: prune(root, object, ''), unknown };
}

const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false });
addFormatsModule.default(ajv, ['date-time', 'int32', 'int64', 'byte']);

/** A validator for objects of a CRD version, from its openAPIV3Schema. */
export function validatorFor(openApiV3Schema: Schema): (object: unknown) => ErrorObject[] {
  const { $comment: _comment, ...schema } = openApiV3Schema;
  const validate: ValidateFunction = ajv.compile(toJsonSchema(schema));
  return (object) => (validate(object) ? [] : [...(validate.errors ?? [])]);
}
