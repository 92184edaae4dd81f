// The kube fake's OpenAPI documents, served as kube-apiserver serves them
// (https://kubernetes.io/docs/concepts/overview/kubernetes-api/#openapi-interface-definition;
// k8s.io/kube-openapi pkg/handler3 for v3, pkg/handler for v2):
// - GET /openapi/v3: the index, {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=<ETag>"}, ...}},
//   one entry per group-version served;
// - GET /openapi/v3/<api/v1 | apis/<group>/<version>>: that group-version's OpenAPI 3.0 document
//   (JSON), with its ETag (SHA-512 of the bytes, upper-case hex) and, when ?hash= names it, the
//   immutable caching headers; an out-of-date hash is redirected (301) to the current one;
// - GET /openapi/v2: the Swagger 2.0 document, in JSON or as gnostic's openapi_v2.Document in
//   protobuf (what client-go's discovery asks for), 406 for anything else.
// Each answers If-None-Match with 304, as http.ServeContent does.
//
// What kubectl reads in them (kubectl-apply-deploy.test.ts runs 1.27 and 1.33 against them): the
// v3 PATCH operation of each kind it writes, to learn that the server takes fieldValidation
// (cli-runtime pkg/resource/query_param_verifier_v3.go), after which `--validate=strict`, its
// default, is left to the server (?fieldValidation=Strict on every write); from 1.29, when it
// computes a patch, whether that PATCH takes a strategic merge patch and whether a component
// schema carries the kind's patch metadata (kubectl pkg/cmd/apply/patcher.go), then /openapi/v2 for
// the same. 1.27 and 1.28 parse /openapi/v2 before anything else and fail without it.
//
// A faithful subset, not the whole: every path of every resource the fake serves, each operation
// with its x-kubernetes-group-version-kind, x-kubernetes-action, query parameters and (PATCH) the
// content types that route accepts (a custom resource's omit strategic merge patch, as
// apiextensions-apiserver's builder does), but no schemas of the kinds (components hold only the
// meta/v1 Patch body); and v2 empty (no paths, no definitions). Finding no kind schema in either,
// kubectl computes its patch from its compiled-in Go types, which carry the same patch metadata.
//
// Also here: which fields each built-in kind has, for the API server's strict decoding
// (fieldValidation; handlers/create.go, update.go and patch.go). The field lists are
// @kubernetes/client-node's models, generated from Kubernetes' own OpenAPI document.
import { createHash } from 'node:crypto';
import * as models from '@kubernetes/client-node';
import { VERSION, servedGroupVersions } from './discovery.ts';
import { type Json, type JsonObject, isObject } from './patch.ts';
import { RESOURCES, type ResourceType } from './store.ts';
import { patchMetaFor } from './strategic-merge-patch.ts';

/** What the fake answers an OpenAPI path with. */
export interface OpenApiAnswer {
  code: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The patch bodies a built-in type's PATCH takes (apiserver pkg/endpoints/installer.go; CBOR apply is behind an off-by-default gate). */
export const BUILTIN_PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];
/** A custom resource's (apiextensions-apiserver customresource_handler.go): no strategic merge patch. */
export const CUSTOM_PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

/** Whether `type` is one of Kubernetes' own (a Go type behind it), not a custom resource. */
export const isBuiltin = (type: ResourceType): boolean => patchMetaFor(type.group, type.kind) !== undefined;

const PATCH_SCHEMA = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';

/** apiserver pkg/endpoints/openapi ToValidOperationID. */
function operationIdPart(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  for (const [i, c] of [...s].entries()) {
    if (/\p{L}|_/u.test(c) || (i !== 0 && /\d/.test(c))) {
      out += capitalize ? c.toUpperCase() : c;
      capitalize = false;
    } else capitalize = true;
  }
  return out;
}

/** GetOperationIDAndTags: `<verb><Group><Version><rest>`, the core group as "core" and ".k8s.io" trimmed. */
const operationId = (verb: string, group: string, version: string, rest: string): string =>
  `${verb}${operationIdPart((group || 'core').replace(/\.k8s\.io$/, ''), true)}${operationIdPart(version, true)}${rest}`;

const query = (name: string, type: string, description: string): JsonObject => ({ description, in: 'query', name, schema: { type, uniqueItems: true } });

const DRY_RUN = query(
  'dryRun',
  'string',
  'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed',
);
const FIELD_MANAGER = query('fieldManager', 'string', 'fieldManager is a name associated with the actor or entity that is making these changes.');
const FIELD_VALIDATION = query(
  'fieldValidation',
  'string',
  'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn (the default) - Strict: fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present.',
);
const FORCE = query('force', 'boolean', 'Force is going to "force" Apply requests. It must be unset for non-apply patch requests.');
const LIST_PARAMETERS = [
  query('allowWatchBookmarks', 'boolean', 'allowWatchBookmarks requests watch events with type "BOOKMARK".'),
  query('continue', 'string', 'The continue option should be set when retrieving more results from the server.'),
  query('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  query('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  query('limit', 'integer', 'limit is a maximum number of responses to return for a list call.'),
  query('resourceVersion', 'string', 'resourceVersion sets a constraint on what resource versions a request may be served from.'),
  query('resourceVersionMatch', 'string', 'resourceVersionMatch determines how resourceVersion is applied to list calls.'),
  query('sendInitialEvents', 'boolean', '`sendInitialEvents=true` may be set together with `watch=true`.'),
  query('timeoutSeconds', 'integer', 'Timeout for the list/watch call.'),
  query('watch', 'boolean', 'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.'),
];
const DELETE_PARAMETERS = [
  DRY_RUN,
  query('gracePeriodSeconds', 'integer', 'The duration in seconds before the object should be deleted.'),
  query('orphanDependents', 'boolean', 'Deprecated: please use the PropagationPolicy.'),
  query('propagationPolicy', 'string', "Whether and how garbage collection will be performed: 'Orphan', 'Background' or 'Foreground'."),
];

const responses = (codes: Record<string, string>): JsonObject => ({
  ...Object.fromEntries(Object.entries(codes).map(([code, description]) => [code, { description }])),
  '401': { description: 'Unauthorized' },
});

function pathParameters(type: ResourceType, named: boolean): JsonObject[] {
  return [
    ...(named ? [{ description: `name of the ${type.kind}`, in: 'path', name: 'name', required: true, schema: { type: 'string', uniqueItems: true } }] : []),
    ...(type.namespaced
      ? [
          {
            description: 'object name and auth scope, such as for teams and projects',
            in: 'path',
            name: 'namespace',
            required: true,
            schema: { type: 'string', uniqueItems: true },
          },
        ]
      : []),
    query('pretty', 'string', "If 'true', then the output is pretty printed."),
  ];
}

/** The paths of one resource type in its group-version's document. */
function resourcePaths(type: ResourceType, version: string): Record<string, JsonObject> {
  const root = type.group === '' ? `/api/${version}` : `/apis/${type.group}/${version}`;
  const collection = `${root}${type.namespaced ? '/namespaces/{namespace}' : ''}/${type.plural}`;
  const scope = type.namespaced ? 'Namespaced' : '';
  const gvk = { group: type.group, kind: type.kind, version };
  const tag = `${operationIdPart(type.group === '' ? 'core' : type.group.replace(/\.k8s\.io$/, ''), false)}_${version}`;
  const op = (action: string, verb: string, rest: string, description: string, extra: JsonObject): JsonObject => ({
    description,
    operationId: operationId(verb, type.group, version, rest),
    ...extra,
    tags: [tag],
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
  });
  const anyBody = { content: { '*/*': { schema: {} } }, required: true };
  const patchBody = {
    content: Object.fromEntries(
      (isBuiltin(type) ? BUILTIN_PATCH_TYPES : CUSTOM_PATCH_TYPES).map((t) => [t, { schema: { $ref: `#/components/schemas/${PATCH_SCHEMA}` } }]),
    ),
    required: true,
  };
  const writes = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
  const named = (suffix: string, what: string): JsonObject => ({
    get: op('get', 'read', `${scope}${type.kind}${suffix}`, `read ${what} the specified ${type.kind}`, { responses: responses({ '200': 'OK' }) }),
    put: op('put', 'replace', `${scope}${type.kind}${suffix}`, `replace ${what} the specified ${type.kind}`, {
      parameters: writes,
      requestBody: anyBody,
      responses: responses({ '200': 'OK', '201': 'Created' }),
    }),
    patch: op('patch', 'patch', `${scope}${type.kind}${suffix}`, `partially update ${what} the specified ${type.kind}`, {
      parameters: [...writes, FORCE],
      requestBody: patchBody,
      responses: responses({ '200': 'OK', '201': 'Created' }),
    }),
    parameters: pathParameters(type, true),
  });
  const paths: Record<string, JsonObject> = {
    [collection]: {
      get: op('list', 'list', `${scope}${type.kind}`, `list or watch objects of kind ${type.kind}`, {
        parameters: LIST_PARAMETERS,
        responses: responses({ '200': 'OK' }),
      }),
      post: op('post', 'create', `${scope}${type.kind}`, `create a ${type.kind}`, {
        parameters: writes,
        requestBody: anyBody,
        responses: responses({ '200': 'OK', '201': 'Created', '202': 'Accepted' }),
      }),
      parameters: pathParameters(type, false),
    },
    [`${collection}/{name}`]: {
      ...named('', ''),
      delete: op('delete', 'delete', `${scope}${type.kind}`, `delete a ${type.kind}`, {
        parameters: DELETE_PARAMETERS,
        responses: responses({ '200': 'OK', '202': 'Accepted' }),
      }),
    },
  };
  if (type.status) paths[`${collection}/{name}/status`] = named('Status', 'status of');
  if (type.namespaced) {
    paths[`${root}/${type.plural}`] = {
      get: op('list', 'list', `${type.kind}ForAllNamespaces`, `list or watch objects of kind ${type.kind}`, { responses: responses({ '200': 'OK' }) }),
      parameters: [...LIST_PARAMETERS, query('pretty', 'string', "If 'true', then the output is pretty printed.")],
    };
  }
  return paths;
}

function groupVersionDocument(group: string, version: string): JsonObject {
  const paths = Object.assign({}, ...RESOURCES.filter((type) => type.group === group).map((type) => resourcePaths(type, version))) as JsonObject;
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: VERSION.gitVersion },
    paths,
    components: {
      schemas: {
        [PATCH_SCHEMA]: { description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.', type: 'object' },
      },
      securitySchemes: { BearerToken: { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' } },
    },
    security: [{ BearerToken: [] }],
  };
}

/** handler3 computeETag: SHA-512 of the document's bytes, %X. */
const etagOf = (bytes: Buffer): string => createHash('sha512').update(bytes).digest('hex').toUpperCase();

interface Served {
  bytes: Buffer;
  etag: string;
}

let v3: { index: Served; documents: Map<string, Served> } | undefined;

/** The v3 documents, built once: RESOURCES does not change while the process runs. */
function v3Documents(): NonNullable<typeof v3> {
  if (v3) return v3;
  const documents = new Map<string, Served>();
  for (const { group, version } of servedGroupVersions()) {
    const bytes = Buffer.from(JSON.stringify(groupVersionDocument(group, version)));
    documents.set(group === '' ? `api/${version}` : `apis/${group}/${version}`, { bytes, etag: etagOf(bytes) });
  }
  const index = { paths: Object.fromEntries([...documents].map(([path, { etag }]) => [path, { serverRelativeURL: relativeUrl(path, etag) }])) };
  const bytes = Buffer.from(JSON.stringify(index));
  v3 = { index: { bytes, etag: etagOf(bytes) }, documents };
  return v3;
}

/** handler3 constructServerRelativeURL. */
const relativeUrl = (path: string, etag: string): string => `/openapi/v3/${path}?${new URLSearchParams({ hash: etag }).toString()}`;

const V2_JSON = Buffer.from(JSON.stringify({ swagger: '2.0', info: { title: 'Kubernetes', version: VERSION.gitVersion }, paths: {}, definitions: {} }));

/** A length-delimited protobuf field (wire type 2). */
function field(number: number, value: Buffer): Buffer {
  const varint = (n: number): number[] => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, ...varint(n >>> 7)]);
  return Buffer.concat([Buffer.from(varint((number << 3) | 2)), Buffer.from(varint(value.length)), value]);
}

/**
 * The same document as gnostic's openapi_v2.Document in protobuf (gnostic-models
 * openapiv2/OpenAPIv2.proto: swagger = 1, info = 2 {title = 1, version = 2}, paths = 8,
 * definitions = 9), as handler.ToProtoBinary makes it from the JSON.
 */
const V2_PROTO = Buffer.concat([
  field(1, Buffer.from('2.0')),
  field(2, Buffer.concat([field(1, Buffer.from('Kubernetes')), field(2, Buffer.from(VERSION.gitVersion))])),
  field(8, Buffer.alloc(0)),
  field(9, Buffer.alloc(0)),
]);

const V2_PROTO_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** goautoneg's clauses, most preferred first (by q; equal q in the order given). */
function acceptClauses(accept: string): { type: string; subtype: string }[] {
  return (accept.trim() === '' ? '*/*' : accept)
    .split(',')
    .map((clause, order) => {
      const [range = '', ...params] = clause.split(';').map((part) => part.trim());
      const q = Number(params.find((param) => param.startsWith('q='))?.slice(2) ?? '1');
      const [type = '', subtype = '*'] = range.split('/');
      return { type, subtype, q: Number.isNaN(q) ? 1 : q, order };
    })
    .filter((clause) => clause.type !== '' && clause.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order);
}

/** The first of `offers` (accepted subtype → body and Content-Type) the Accept header takes. */
function negotiate(accept: string, offers: { subtypes: string[]; contentType: string; served: Served }[]): (typeof offers)[number] | undefined {
  for (const clause of acceptClauses(accept)) {
    for (const offer of offers) {
      if ((clause.type === 'application' || clause.type === '*') && (clause.subtype === '*' || offer.subtypes.includes(clause.subtype))) return offer;
    }
  }
  return undefined;
}

function content(served: Served, contentType: string, ifNoneMatch: string | undefined, extra: Record<string, string> = {}): OpenApiAnswer {
  const etag = JSON.stringify(served.etag);
  const headers = { Etag: etag, Vary: 'Accept', ...extra };
  if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim() === etag)) return { code: 304, headers, body: Buffer.alloc(0) };
  return { code: 200, headers: { ...headers, 'Content-Type': contentType, 'Content-Length': String(served.bytes.length) }, body: served.bytes };
}

/** The answer to a GET of an OpenAPI path, or undefined when `url` is not one. */
export function openApi(url: URL, accept: string, ifNoneMatch: string | undefined): OpenApiAnswer | undefined {
  const notAcceptable: OpenApiAnswer = { code: 406, headers: { Vary: 'Accept' }, body: Buffer.alloc(0) };
  if (url.pathname === '/openapi/v2') {
    const offer = negotiate(accept, [
      { subtypes: ['json'], contentType: 'application/json', served: { bytes: V2_JSON, etag: etagOf(V2_JSON) } },
      {
        subtypes: ['com.github.proto-openapi.spec.v2@v1.0+protobuf', 'com.github.proto-openapi.spec.v2.v1.0+protobuf'],
        contentType: V2_PROTO_TYPE,
        served: { bytes: V2_PROTO, etag: etagOf(V2_PROTO) },
      },
    ]);
    return offer ? content(offer.served, offer.contentType, ifNoneMatch) : notAcceptable;
  }
  const { index, documents } = v3Documents();
  if (url.pathname === '/openapi/v3') return content(index, 'application/json', ifNoneMatch);
  if (!url.pathname.startsWith('/openapi/v3/')) return undefined;
  const path = url.pathname.slice('/openapi/v3/'.length);
  const served = documents.get(path);
  if (!served) return undefined;
  // The fake has the JSON form only; a client that takes only v3's protobuf is not served.
  const offer = negotiate(accept, [{ subtypes: ['json'], contentType: 'application/json', served }]);
  if (!offer) return notAcceptable;
  const hash = url.searchParams.get('hash');
  if (hash !== null && hash !== '' && hash !== served.etag) {
    const location = relativeUrl(path, served.etag);
    return {
      code: 301,
      headers: { Location: location, 'Content-Type': 'text/html; charset=utf-8' },
      body: Buffer.from(`<a href="${location}">Moved Permanently</a>.\n\n`),
    };
  }
  const cache: Record<string, string> = hash
    ? { 'Cache-Control': 'public, immutable', Expires: new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString() }
    : {};
  return content(served, 'application/json', ifNoneMatch, cache);
}

// --- Strict decoding of the built-in kinds --------------------------------------------------

interface Attribute {
  baseName: string;
  type: string;
}

const MODELS = models as unknown as Record<string, { getAttributeTypeMap?: () => Attribute[] } | undefined>;

/** client-node's model name for a kind the fake serves: V1<Kind>, but core/v1 Event is CoreV1Event. */
const modelOf = (type: ResourceType): string => (type.group === '' && type.kind === 'Event' ? 'CoreV1Event' : `V1${type.kind}`);

/** The value with the fields its type does not have dropped, each one named in `unknown` as sigs.k8s.io/json's strict decoding names it (`spec.template.spec.containers[0].foo`). */
function dropUnknown(typeName: string, value: Json, at: string, unknown: string[]): Json {
  if (value === null) return value;
  const join = (key: string): string => (at === '' ? key : `${at}.${key}`);
  const list = /^Array<(.+)>$/.exec(typeName);
  if (list) return Array.isArray(value) ? value.map((item, i) => dropUnknown(list[1]!, item, `${at}[${i}]`, unknown)) : value;
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(typeName);
  if (map)
    return isObject(value) ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, dropUnknown(map[1]!, item, join(key), unknown)])) : value;
  const attributes = MODELS[typeName]?.getAttributeTypeMap?.();
  if (!attributes || !isObject(value)) return value;
  const kept: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    const attribute = attributes.find((a) => a.baseName === key);
    if (attribute) kept[key] = dropUnknown(attribute.type, item, join(key), unknown);
    else if (unknown.length < 100) unknown.push(`unknown field "${join(key)}"`);
  }
  return kept;
}

/**
 * A built-in object as the API server decodes it into its Go type: the fields the type lacks are
 * dropped and named (`unknown field "spec.foo"`, at most 100, as sigs.k8s.io/json keeps). Types
 * without a model here are returned as they are.
 */
export function decodeBuiltin(type: ResourceType, object: JsonObject): { object: JsonObject; unknown: string[] } {
  const unknown: string[] = [];
  if (!MODELS[modelOf(type)]?.getAttributeTypeMap) return { object, unknown };
  return { object: dropUnknown(modelOf(type), object, '', unknown) as JsonObject, unknown: [...new Set(unknown)] };
}
