// The server-side printing kubectl asks for (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`),
// for Events: a meta.k8s.io/v1 Table with the columns and cells of kubernetes pkg/printers/
// internalversion printers.go (eventColumnDefinitions, printEvent), ages as apimachinery's
// duration.HumanDuration writes them. Other resources are answered as lists, which kubectl prints
// as NAME and AGE, as it does for a server without tables.
import { type Json, type JsonObject, isObject, text } from './patch.ts';
import { metadataOf } from './store.ts';

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

/** A Table of Events, each row carrying its object's metadata (includeObject=Metadata, the default). */
export function eventTable(events: readonly JsonObject[], resourceVersion: string, now = Date.now()): JsonObject {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: COLUMNS,
    rows: events.map((event) => ({
      cells: eventCells(event, now),
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: metadataOf(event) },
    })),
  };
}
