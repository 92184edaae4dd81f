// A protobuf request body, read as an API server reads it, for the kinds kubectl's typed clients
// create (`kubectl create secret|configmap|namespace`, which send protobuf from 1.32 on): the
// envelope of k8s.io/apimachinery runtime/serializer/protobuf (the 4 bytes "k8s\0", then a
// runtime.Unknown holding typeMeta and the object's own bytes), and the messages of
// k8s.io/api core/v1/generated.proto and apimachinery meta/v1/generated.proto by their field
// numbers. A field the fake does not model is refused, never dropped: the object would not be the
// one the client sent. gogo-protobuf writes every non-pointer field, empty or not; the JSON of the
// same object leaves the empty ones out (omitempty), so they are left out here too. Read with
// protobufjs's wire Reader.
import protobuf from 'protobufjs';
import type { Json, JsonObject } from './patch.ts';

const { Reader } = protobuf;
type WireReader = protobuf.Reader;

/** apimachinery runtime/serializer/protobuf protoEncodingPrefix. */
const PREFIX = [0x6b, 0x38, 0x73, 0x00];

/** What the fake cannot read: a kind it does not model (415), or a body that is no object at all (400). */
export class ProtobufBodyError extends Error {
  readonly unmodelled: boolean;
  constructor(message: string, unmodelled = true) {
    super(message);
    this.unmodelled = unmodelled;
  }
}

type Field =
  | { name: string; type: 'string' | 'bytes' | 'bool' | 'int64' | 'time' }
  | { name: string; type: 'message'; of: Message; repeated?: boolean }
  | { name: string; type: 'repeated-string' }
  | { name: string; type: 'map'; values: 'string' | 'bytes' };
type Message = { name: string; fields: Record<number, Field> };

const OWNER_REFERENCE: Message = {
  name: 'OwnerReference',
  fields: {
    5: { name: 'apiVersion', type: 'string' },
    1: { name: 'kind', type: 'string' },
    3: { name: 'name', type: 'string' },
    4: { name: 'uid', type: 'string' },
    6: { name: 'controller', type: 'bool' },
    7: { name: 'blockOwnerDeletion', type: 'bool' },
  },
};

/** ObjectMeta, but managedFields (17), which a create does not send. */
const OBJECT_META: Message = {
  name: 'ObjectMeta',
  fields: {
    1: { name: 'name', type: 'string' },
    2: { name: 'generateName', type: 'string' },
    3: { name: 'namespace', type: 'string' },
    4: { name: 'selfLink', type: 'string' },
    5: { name: 'uid', type: 'string' },
    6: { name: 'resourceVersion', type: 'string' },
    7: { name: 'generation', type: 'int64' },
    8: { name: 'creationTimestamp', type: 'time' },
    9: { name: 'deletionTimestamp', type: 'time' },
    10: { name: 'deletionGracePeriodSeconds', type: 'int64' },
    11: { name: 'labels', type: 'map', values: 'string' },
    12: { name: 'annotations', type: 'map', values: 'string' },
    13: { name: 'ownerReferences', type: 'message', of: OWNER_REFERENCE, repeated: true },
    14: { name: 'finalizers', type: 'repeated-string' },
  },
};

const metadata: Field = { name: 'metadata', type: 'message', of: OBJECT_META };

/** The kinds read, by apiVersion/kind. */
const KINDS: Record<string, Message> = {
  'v1/Secret': {
    name: 'Secret',
    fields: {
      1: metadata,
      5: { name: 'immutable', type: 'bool' },
      2: { name: 'data', type: 'map', values: 'bytes' },
      4: { name: 'stringData', type: 'map', values: 'string' },
      3: { name: 'type', type: 'string' },
    },
  },
  'v1/ConfigMap': {
    name: 'ConfigMap',
    fields: {
      1: metadata,
      4: { name: 'immutable', type: 'bool' },
      2: { name: 'data', type: 'map', values: 'string' },
      3: { name: 'binaryData', type: 'map', values: 'bytes' },
    },
  },
  'v1/Namespace': {
    name: 'Namespace',
    fields: {
      1: metadata,
      2: { name: 'spec', type: 'message', of: { name: 'NamespaceSpec', fields: { 1: { name: 'finalizers', type: 'repeated-string' } } } },
    },
  },
};

const UNKNOWN: Message = {
  name: 'Unknown',
  fields: {
    1: {
      name: 'typeMeta',
      type: 'message',
      of: { name: 'TypeMeta', fields: { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } } },
    },
    2: { name: 'raw', type: 'bytes' },
    3: { name: 'contentEncoding', type: 'string' },
    4: { name: 'contentType', type: 'string' },
  },
};

/** A map entry: key = 1, value = 2. */
function mapEntry(reader: WireReader, values: 'string' | 'bytes'): [string, string] {
  const end = reader.uint32() + reader.pos;
  let key = '';
  let value = '';
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag >>> 3 === 1) key = reader.string();
    else if (tag >>> 3 === 2) value = values === 'string' ? reader.string() : Buffer.from(reader.bytes()).toString('base64');
    else reader.skipType(tag & 7);
  }
  return [key, value];
}

/** metav1.Time: seconds and nanos, as its JSON writes it (RFC 3339, whole seconds). */
function time(reader: WireReader): string {
  const end = reader.uint32() + reader.pos;
  let seconds = 0;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag >>> 3 === 1) seconds = Number(reader.int64());
    else reader.skipType(tag & 7);
  }
  return new Date(seconds * 1_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function decode(reader: WireReader, message: Message, end: number): JsonObject {
  const out: JsonObject = {};
  while (reader.pos < end) {
    const tag = reader.uint32();
    const field = message.fields[tag >>> 3];
    if (!field) throw new ProtobufBodyError(`field ${tag >>> 3} of ${message.name} is not modelled by the kube fake`);
    switch (field.type) {
      case 'string': {
        const value = reader.string();
        if (value !== '') out[field.name] = value;
        break;
      }
      case 'bytes':
        out[field.name] = Buffer.from(reader.bytes()).toString('base64');
        break;
      case 'bool':
        out[field.name] = reader.bool();
        break;
      case 'int64': {
        const value = Number(reader.int64());
        if (value !== 0) out[field.name] = value;
        break;
      }
      case 'time': {
        // The zero Time is written too; its JSON is null, which an object made for a create leaves out.
        const value = time(reader);
        if (value !== '1970-01-01T00:00:00Z') out[field.name] = value;
        break;
      }
      case 'repeated-string':
        out[field.name] = [...((out[field.name] as Json[] | undefined) ?? []), reader.string()];
        break;
      case 'map': {
        const [key, value] = mapEntry(reader, field.values);
        out[field.name] = { ...((out[field.name] as JsonObject | undefined) ?? {}), [key]: value };
        break;
      }
      case 'message': {
        const length = reader.uint32();
        const value = decode(reader, field.of, reader.pos + length);
        out[field.name] = field.repeated ? [...((out[field.name] as Json[] | undefined) ?? []), value] : value;
        break;
      }
    }
  }
  return out;
}

/** The object a protobuf body holds, as its JSON; a ProtobufBodyError says what cannot be read. */
export function objectFromProtobuf(body: Uint8Array): JsonObject {
  if (body.length < PREFIX.length || PREFIX.some((byte, i) => body[i] !== byte))
    throw new ProtobufBodyError('the body does not start with the protobuf prefix k8s\\0');
  const envelope = Reader.create(body.subarray(PREFIX.length));
  const unknown = decode(envelope, UNKNOWN, envelope.len);
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  if (!typeMeta.apiVersion || !typeMeta.kind) throw new ProtobufBodyError('the protobuf envelope names no apiVersion and kind', false);
  const kind = `${typeMeta.apiVersion}/${typeMeta.kind}`;
  const message = KINDS[kind];
  if (!message) throw new ProtobufBodyError(`protobuf bodies of ${kind} are not modelled by the kube fake (only ${Object.keys(KINDS).join(', ')})`);
  if (unknown.contentEncoding) throw new ProtobufBodyError(`contentEncoding ${JSON.stringify(unknown.contentEncoding)} is not modelled by the kube fake`);
  const raw = Buffer.from(typeof unknown.raw === 'string' ? unknown.raw : '', 'base64');
  const object = decode(Reader.create(raw), message, raw.length);
  return { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, ...object };
}
