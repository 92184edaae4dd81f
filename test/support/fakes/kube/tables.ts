// The server-side printing kubectl asks for (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`):
// a meta.k8s.io/v1 Table, for a list and for a single object alike. Events get the columns and
// cells of kubernetes pkg/printers/internalversion printers.go (eventColumnDefinitions, printEvent);
// the custom resources whose CRDs the fake holds (crd-admission.ts) get those of
// apiextensions-apiserver pkg/registry/customresource/tableconvertor, from the version's
// additionalPrinterColumns. Ages as apimachinery's duration.HumanDuration writes them; each row's
// object as the includeObject query parameter asks (apiserver handlers/response.go asTable). Other
// resources are answered as lists, which kubectl prints as NAME and AGE, as it does for a server
// without tables.
import { type PrinterColumn, printerColumnsOf } from './crd-admission.ts';
import { type Json, type JsonObject, isObject, text } from './patch.ts';
import { badRequest, internal } from './status.ts';
import { type ResourceType, metadataOf } from './store.ts';

/** Whether the Accept header asks for a Table first (kubectl get, without -o json or yaml). */
export const wantsTable = (accept: string): boolean => /^application\/json;\s*as=Table/.test(accept.split(',')[0]?.trim() ?? '');

const COLUMNS: JsonObject[] = [
  { name: 'Last Seen', type: 'string', format: '', description: 'The time at which the most recent occurrence of this event was recorded.', priority: 0 },
  { name: 'Type', type: 'string', format: '', description: 'Type of this event (Normal, Warning), new types could be added in the future', priority: 0 },
  {
    name: 'Reason',
    type: 'string',
    format: '',
    description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    priority: 0,
  },
  { name: 'Object', type: 'string', format: '', description: 'The object that this event is about.', priority: 0 },
  {
    name: 'Subobject',
    type: 'string',
    format: '',
    description: 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.',
    priority: 1,
  },
  {
    name: 'Source',
    type: 'string',
    format: '',
    description: 'The component reporting this event. Should be a short machine understandable string.',
    priority: 1,
  },
  { name: 'Message', type: 'string', format: '', description: 'A human-readable description of the status of this operation.', priority: 0 },
  {
    name: 'First Seen',
    type: 'string',
    format: '',
    description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
    priority: 1,
  },
  { name: 'Count', type: 'string', format: '', description: 'The number of times this event has occurred.', priority: 1 },
  { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 1 },
];

/** apimachinery pkg/util/duration HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 192) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  const days = Math.floor(hours / 24);
  if (days < 365 * 2) return `${days}d`;
  if (days < 365 * 8) return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

const at = (object: JsonObject, ...keys: string[]): Json | undefined =>
  keys.reduce<Json | undefined>((value, key) => (isObject(value) ? value[key] : undefined), object);

/** printEvent's cells for one Event at `now`. */
function eventCells(event: JsonObject, now: number): Json[] {
  const since = (value: Json | undefined): string => (text(value) === '' ? '<unknown>' : humanDuration(now - Date.parse(text(value))));
  const first = text(event.firstTimestamp) !== '' ? since(event.firstTimestamp) : since(event.eventTime);
  const series = at(event, 'series');
  const last = isObject(series) ? since(series.lastObservedTime) : text(event.lastTimestamp) !== '' ? since(event.lastTimestamp) : first;
  const count = isObject(series) ? Number(series.count ?? 0) : Number(event.count ?? 0) || 1;
  const component = text(at(event, 'source', 'component'));
  const host = text(at(event, 'source', 'host'));
  const source =
    component !== ''
      ? host !== ''
        ? `${component}, ${host}`
        : component
      : [text(event.reportingComponent), text(event.reportingInstance)].filter((s) => s !== '').join(', ');
  const object = `${text(at(event, 'involvedObject', 'kind')).toLowerCase()}/${text(at(event, 'involvedObject', 'name'))}`;
  return [
    last,
    text(event.type),
    text(event.reason),
    object,
    text(at(event, 'involvedObject', 'fieldPath')),
    source,
    text(event.message).trim(),
    first,
    count,
    text(metadataOf(event).name),
  ];
}

/**
 * A row's object as includeObject asks (apiserver handlers/response.go asTable): Object, the whole
 * object in the requested version; Metadata or nothing, its metadata as a meta.k8s.io/v1
 * PartialObjectMetadata (meta.AsPartialObjectMetadata); None, no object (a nil RawExtension, which
 * marshals as null); any other value is a 400, "unrecognized includeObject value", checked per
 * row as asTable does, so not at all for an empty Table.
 */
function rowObject(object: JsonObject, includeObject: string, apiVersion: string, kind: string): Json {
  switch (includeObject) {
    case 'Object':
      return { ...object, kind, apiVersion };
    case 'Metadata':
    case '':
      return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: metadataOf(object) };
    case 'None':
      return null;
    default:
      throw badRequest(`unrecognized includeObject value: ${JSON.stringify(includeObject)}`);
  }
}

interface TableOf {
  columnDefinitions: readonly JsonObject[];
  objects: readonly JsonObject[];
  cells: (object: JsonObject) => Json[];
  /** The list's resourceVersion, or the single object's (tableconvertor: ListAccessor, else CommonAccessor). */
  resourceVersion: string;
  includeObject: string;
  apiVersion: string;
  kind: string;
}

function table({ columnDefinitions, objects, cells, resourceVersion, includeObject, apiVersion, kind }: TableOf): JsonObject {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: [...columnDefinitions],
    rows: objects.map((object) => ({ cells: cells(object), object: rowObject(object, includeObject, apiVersion, kind) })),
  };
}

/** A Table of Events, each row carrying its object as includeObject asks (Metadata, the default). */
export function eventTable(events: readonly JsonObject[], resourceVersion: string, now = Date.now(), includeObject = ''): JsonObject {
  return table({
    columnDefinitions: COLUMNS,
    objects: events,
    cells: (event) => eventCells(event, now),
    resourceVersion,
    includeObject,
    apiVersion: 'v1',
    kind: 'Event',
  });
}

// metav1.ObjectMeta{}.SwaggerDoc()'s name and creationTimestamp, which tableconvertor and the CRD
// handler take their descriptions from.
const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** apiextensions-apiserver customresource_handler.go serveDefaultColumnsIfEmpty: a CRD without printer columns prints its age. */
const DEFAULT_PRINTER_COLUMNS: readonly PrinterColumn[] = [
  { name: 'Age', type: 'date', description: CREATION_TIMESTAMP_DESCRIPTION, jsonPath: '.metadata.creationTimestamp' },
];

/**
 * A printer column's jsonPath as the keys it walks. The API server evaluates it with client-go's
 * jsonpath (`{<jsonPath>}`); the fake evaluates simple `.a.b.c` paths only, which is all our CRDs
 * use, and refuses any other loudly (a 500 that names the path) rather than print a guess.
 */
function keysOf(column: PrinterColumn, kind: string): string[] {
  if (!/^(\.[A-Za-z0-9_-]+)+$/.test(column.jsonPath)) {
    throw internal(
      `kube fake: cannot evaluate the printer column ${JSON.stringify(column.name)} of ${kind}: jsonPath ${JSON.stringify(column.jsonPath)} is not a simple .a.b.c path, the only kind the fake models`,
    );
  }
  return column.jsonPath.slice(1).split('.');
}

/**
 * The value at `keys`, or undefined when missing: jsonpath with AllowMissingKeys(true), as
 * tableconvertor sets it, finds nothing where a key is absent or the value on the way is not a map
 * (evalField: null skipped, anything else not a struct or map yields no result).
 */
function find(object: JsonObject, keys: readonly string[]): { value: Json } | undefined {
  let value: Json = object;
  for (const key of keys) {
    if (!isObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key]!;
  }
  return { value };
}

/** metav1.Time UnmarshalQueryParameter: "" and "null" are the zero time; anything else must be RFC 3339. */
function dateCell(value: string, now: number): string {
  // metatable.ConvertToHumanReadableDateType: the zero time is "<unknown>".
  if (value === '' || value === 'null') return '<unknown>';
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) || Number.isNaN(time)) return '<invalid>';
  return humanDuration(now - time);
}

/** tableconvertor cellForJSONValue: a value of the column's type, a date as its age, anything else an empty (null) cell. */
function typedCell(type: string, value: Json, now: number): Json {
  if (value === null) return null;
  switch (type) {
    case 'integer':
      // int64(float64): truncated.
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return typeof value === 'string' ? value : null;
    case 'date':
      return typeof value === 'string' ? dateCell(value, now) : null;
    default:
      return null;
  }
}

/**
 * A `type: string` column's cell: jsonpath PrintResults of the value (template.PrintableValue, then
 * fmt.Fprint). Strings, integers and booleans print as themselves; what Go would print in a way the
 * fake does not model (null as "<no value>", floats as %v, maps and lists) is refused, naming the path.
 */
function stringCell(column: PrinterColumn, kind: string, value: Json): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isInteger(value))) return String(value);
  throw internal(
    `kube fake: cannot print ${JSON.stringify(value)} at jsonPath ${JSON.stringify(column.jsonPath)} of ${kind} (column ${JSON.stringify(column.name)}) as the API server would`,
  );
}

export interface CustomResourceTableOptions {
  kind: string;
  /** The requested group/version, which includeObject=Object objects carry. */
  apiVersion: string;
  includeObject?: string;
  now?: number;
}

/**
 * tableconvertor.New and ConvertToTable: the Name column first (format name), then one column per
 * printer column in the CRD's order (its description, or "Custom resource definition column (in
 * JSONPath format): <path>" when it has none; its priority, which kubectl shows under -o wide
 * only); each row the object's name and the columns' jsonPaths evaluated on it, a missing value an
 * empty cell (null).
 */
export function customResourceTable(
  printerColumns: readonly PrinterColumn[],
  objects: readonly JsonObject[],
  resourceVersion: string,
  { kind, apiVersion, includeObject = '', now = Date.now() }: CustomResourceTableOptions,
): JsonObject {
  const columns = printerColumns.length > 0 ? printerColumns : DEFAULT_PRINTER_COLUMNS;
  const paths = columns.map((column) => keysOf(column, kind));
  const columnDefinitions = [
    { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
    ...columns.map((column) => ({
      name: column.name,
      type: column.type,
      format: column.format ?? '',
      description: column.description || `Custom resource definition column (in JSONPath format): ${column.jsonPath}`,
      priority: column.priority ?? 0,
    })),
  ];
  const cells = (object: JsonObject): Json[] => [
    text(metadataOf(object).name),
    ...columns.map((column, i) => {
      const found = find(object, paths[i]!);
      if (!found) return null;
      return column.type === 'string' ? stringCell(column, kind, found.value) : typedCell(column.type, found.value, now);
    }),
  ];
  return table({ columnDefinitions, objects, cells, resourceVersion, includeObject, apiVersion, kind });
}

/**
 * The Table for a GET of `objects` (a list, or the one object asked for) of `type` at `version`,
 * for the types the fake prints: Events, and the custom resources whose CRDs it holds. Undefined
 * for the others, which are answered as they are.
 */
export function tableFor(
  type: ResourceType,
  version: string,
  objects: readonly JsonObject[],
  resourceVersion: string,
  includeObject: string,
  now = Date.now(),
): JsonObject | undefined {
  if (type.group === '' && type.plural === 'events') return eventTable(objects, resourceVersion, now, includeObject);
  const crd = printerColumnsOf(type.group, type.plural, version);
  if (!crd) return undefined;
  return customResourceTable(crd.columns, objects, resourceVersion, { kind: crd.kind, apiVersion: `${type.group}/${version}`, includeObject, now });
}
