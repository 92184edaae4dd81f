// Writes of the project's custom resources as the API server admits them, from the CRDs in
// infra/kubernetes/deploy/crds: unknown fields pruned first (structural-schema pruning, KEP-2332; each one
// a `Warning` header under fieldValidation=Warn, the default for a client that sends none, as
// apiserver handlers/rest.go fieldValidation() has it), then the object validated against the
// version's openAPIV3Schema, a list of x-kubernetes-list-type map holding each key once. A failure is 422 Invalid with one cause per field, worded as
// apiextensions-apiserver pkg/apiserver/validation kubeOpenAPIResultToFieldErrors maps kube-openapi's
// errors onto apimachinery's field errors (pkg/util/validation/field/errors.go), and
// errors.NewInvalid builds the Status.
import fs from 'node:fs';
import path from 'node:path';
import type { ErrorObject } from 'ajv';
import { load } from 'js-yaml';
import { pruneUnknownFields, validatorFor, type Schema } from '../../../infra/crd-schema.ts';
import { type Json, type JsonObject, isObject } from './patch.ts';
import { badRequest, invalid, type StatusCause } from './status.ts';

const CRD_DIR = path.resolve(import.meta.dirname, '../../../../infra/kubernetes/deploy/crds');

/** One of a CRD version's additionalPrinterColumns (apiextensions v1 CustomResourceColumnDefinition). */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

interface CustomResourceVersion {
  group: string;
  kind: string;
  schema: Schema;
  validate: (object: unknown) => ErrorObject[];
  /** Its additionalPrinterColumns as the CRD gives them, [] when it gives none. */
  printerColumns: readonly PrinterColumn[];
}

interface CrdShape {
  spec: {
    group: string;
    names: { kind: string; plural: string };
    versions: { name: string; served: boolean; schema: { openAPIV3Schema: Schema }; additionalPrinterColumns?: PrinterColumn[] }[];
  };
}

function loadCrds(): Map<string, CustomResourceVersion> {
  const versions = new Map<string, CustomResourceVersion>();
  for (const file of fs.readdirSync(CRD_DIR).filter((name) => name.endsWith('.yaml'))) {
    const crd = load(fs.readFileSync(path.join(CRD_DIR, file), 'utf8')) as CrdShape;
    const { group, names } = crd.spec;
    for (const version of crd.spec.versions.filter((v) => v.served)) {
      const schema = version.schema.openAPIV3Schema;
      versions.set(`${group}/${names.plural}/${version.name}`, {
        group,
        kind: names.kind,
        schema,
        validate: validatorFor(schema),
        printerColumns: version.additionalPrinterColumns ?? [],
      });
    }
  }
  return versions;
}

let crds: Map<string, CustomResourceVersion> | undefined;

/** The CRD version the fake holds for `group/plural` at `version`, loaded once. */
const crdFor = (group: string, plural: string, version: string): CustomResourceVersion | undefined =>
  (crds ??= loadCrds()).get(`${group}/${plural}/${version}`);

/**
 * The kind and additionalPrinterColumns of `group/plural` at `version` as its CRD gives them ([]
 * when it gives none), for the server-side printing of tables.ts; undefined when the fake holds no
 * CRD for it.
 */
export function printerColumnsOf(group: string, plural: string, version: string): { kind: string; columns: readonly PrinterColumn[] } | undefined {
  const crd = crdFor(group, plural, version);
  return crd && { kind: crd.kind, columns: crd.printerColumns };
}

/**
 * The value at a JSON pointer, and its field as kube-openapi names it: `status.conditions[0].reason`
 * (`%s[%d]` for items, `.` between properties).
 */
function locate(object: Json, pointer: string): { field: string; value: Json | undefined } {
  let value: Json | undefined = object;
  let field = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(value)) {
      field += `[${part}]`;
      value = value[Number(part)];
    } else {
      field += field === '' ? part : `.${part}`;
      value = isObject(value) ? value[part] : undefined;
    }
  }
  return { field, value };
}

/** The JSON type kube-openapi sees in decoded data (schemaInfoForType): an integral number is an integer. */
function jsonType(value: Json | undefined): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** field.Error ErrorBody's rendering of a bad value: %q for strings, %v for numbers and booleans, JSON otherwise. */
function shown(value: Json | undefined): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value ?? null);
}

const cause = (reason: string, field: string, message: string): StatusCause => ({ reason, message, field });

/** One ajv error as the field error kubeOpenAPIResultToFieldErrors makes of kube-openapi's. */
function causeOf(error: ErrorObject, object: JsonObject): StatusCause {
  const { field, value } = locate(object, error.instancePath);
  const params = error.params as Record<string, unknown>;
  const limit = String(params.limit);
  // kube-openapi's own sentence, the detail of the Invalid and TypeInvalid errors.
  const says = (what: string) => `${field} in body ${what}`;
  switch (error.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      return cause('FieldValueRequired', field === '' ? missing : `${field}.${missing}`, 'Required value');
    }
    case 'enum': {
      const supported = (params.allowedValues as Json[])
        .map((allowed) => JSON.stringify(typeof allowed === 'string' ? allowed : JSON.stringify(allowed)))
        .join(', ');
      return cause('FieldValueNotSupported', field, `Unsupported value: ${shown(value)}: supported values: ${supported}`);
    }
    case 'type': {
      const seen = jsonType(value);
      return cause('FieldValueTypeInvalid', field, `Invalid value: "${seen}": ${says(`must be of type ${String(params.type)}: "${seen}"`)}`);
    }
    case 'format':
      return cause('FieldValueTypeInvalid', field, `Invalid value: ${shown(value)}: ${says(`must be of type ${String(params.format)}: ${shown(value)}`)}`);
    case 'maxLength':
      return cause('FieldValueTooLong', field, `Too long: may not be more than ${limit} ${limit === '1' ? 'byte' : 'bytes'}`);
    case 'maxItems':
      return cause(
        'FieldValueTooMany',
        field,
        `Too many: ${Array.isArray(value) ? value.length : -1}: must have at most ${limit} ${limit === '1' ? 'item' : 'items'}`,
      );
    case 'minLength':
      return cause('FieldValueInvalid', field, `Invalid value: ${shown(value)}: ${says(`should be at least ${limit} chars long`)}`);
    case 'pattern':
      return cause('FieldValueInvalid', field, `Invalid value: ${shown(value)}: ${says(`should match '${String(params.pattern)}'`)}`);
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum': {
      const bound = { minimum: 'greater than or equal to', exclusiveMinimum: 'greater than', maximum: 'less than or equal to', exclusiveMaximum: 'less than' }[
        error.keyword
      ];
      return cause('FieldValueInvalid', field, `Invalid value: ${shown(value)}: ${says(`should be ${bound} ${limit}`)}`);
    }
    default:
      return cause('FieldValueInvalid', field, `Invalid value: ${shown(value)}: ${says(error.message ?? 'is invalid')}`);
  }
}

/** Go's %#v of a list-map item's keys, as field.Duplicate renders them: map[string]interface {}{"type":"Ready"}. */
const goMap = (keys: JsonObject): string =>
  `map[string]interface {}{${Object.entries(keys)
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
    .join(', ')}}`;

/**
 * x-kubernetes-list-type: map: no two items with the same keys (apiextensions-apiserver
 * pkg/apiserver/schema/listtype validateListSetsAndMaps: field.Duplicate at the later item).
 */
function duplicateKeys(schema: Schema, value: Json | undefined, field: string): StatusCause[] {
  const properties = isObject(schema.properties as Json) ? (schema.properties as Record<string, Schema>) : {};
  if (Array.isArray(value)) {
    const items = isObject(schema.items as Json) ? (schema.items as Schema) : undefined;
    const nested = items ? value.flatMap((item, i) => duplicateKeys(items, item, `${field}[${i}]`)) : [];
    const keys =
      schema['x-kubernetes-list-type'] === 'map' && Array.isArray(schema['x-kubernetes-list-map-keys'])
        ? (schema['x-kubernetes-list-map-keys'] as string[])
        : undefined;
    if (!keys) return nested;
    const seen = new Set<string>();
    const duplicates = value.flatMap((item, i) => {
      const picked: JsonObject = Object.fromEntries(keys.flatMap((key) => (isObject(item) && item[key] !== undefined ? [[key, item[key]!]] : [])));
      const id = JSON.stringify(picked);
      if (!seen.has(id)) return (seen.add(id), []);
      return [cause('FieldValueDuplicate', `${field}[${i}]`, `Duplicate value: ${goMap(picked)}`)];
    });
    return [...nested, ...duplicates];
  }
  if (!isObject(value)) return [];
  return Object.entries(properties).flatMap(([name, child]) => duplicateKeys(child, value[name], field === '' ? name : `${field}.${name}`));
}

export interface Admitted {
  object: JsonObject;
  /** `unknown field "spec.paths"`, one per pruned field: the API server's Warning texts. */
  warnings: string[];
}

/**
 * The object the API server would store for a write of `group/plural` at `version`, or a
 * KubeFakeError (422) when it breaks the schema. Resources without a CRD here pass unchanged.
 */
export function admitCustomResource(group: string, plural: string, version: string, object: JsonObject, fieldValidation: string | null): Admitted {
  const crd = crdFor(group, plural, version);
  if (!crd) return { object, warnings: [] };
  const { pruned, unknown } = pruneUnknownFields(crd.schema, object);
  const kept = pruned as JsonObject;
  const unknownFields = unknown.map((field) => `unknown field "${field}"`);
  if (fieldValidation === 'Strict' && unknownFields.length > 0) {
    // Decoding fails before validation: handlers/rest.go transformDecodeError over runtime's
    // strictDecodingError, as create and update word it (a patch's wording is not modelled apart).
    throw badRequest(`${crd.kind} in version "${version}" cannot be handled as a ${crd.kind}: strict decoding error: ${unknownFields.join(', ')}`);
  }
  const causes = [...crd.validate(kept).map((error) => causeOf(error, kept)), ...duplicateKeys(crd.schema, kept, '')];
  if (causes.length > 0) {
    const name = isObject(kept.metadata) && typeof kept.metadata.name === 'string' ? kept.metadata.name : '';
    throw invalid(crd.kind, crd.group, name, causes);
  }
  // Ignore drops them silently; Warn (the default) says so.
  return { object: kept, warnings: fieldValidation === 'Ignore' ? [] : unknownFields };
}
