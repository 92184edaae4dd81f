// How values sit in items. Structured fields are JSON text, as in the sqlite store, so both read
// back exactly what was written; a large one (views, an outbox carrying a MembersProbed event) is
// stored gzipped as binary instead, keeping the incident well under DynamoDB's 400 KB item limit.
import { gunzipSync, gzipSync } from 'node:zlib';
/** An item as the document client reads it; every field is checked as it is used. */
export type Item = Record<string, unknown>;

/** Above this many bytes of JSON a field is compressed; below it stays readable in the console. */
export const COMPRESS_ABOVE_BYTES = 8 * 1024;

export function encodeJson(value: unknown): string | Uint8Array {
  const text = JSON.stringify(value) ?? 'null';
  return Buffer.byteLength(text) > COMPRESS_ABOVE_BYTES ? new Uint8Array(gzipSync(text)) : text;
}

export function decodeJson(item: Item, name: string): unknown {
  const value = item[name];
  if (typeof value === 'string') return JSON.parse(value);
  if (value instanceof Uint8Array) return JSON.parse(gunzipSync(value).toString('utf8'));
  throw new TypeError(`attribute ${name}: expected JSON text or gzipped JSON, got ${describe(value)}`);
}

export const optJson = (item: Item, name: string): unknown => (item[name] === undefined ? undefined : decodeJson(item, name));

/** Text that must come back byte for byte (a dead letter's raw payload); gzipped when large. */
export function encodeText(text: string): string | Uint8Array {
  return Buffer.byteLength(text) > COMPRESS_ABOVE_BYTES ? new Uint8Array(gzipSync(text)) : text;
}

export function decodeText(item: Item, name: string): string {
  const value = item[name];
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return gunzipSync(value).toString('utf8');
  throw new TypeError(`attribute ${name}: expected text, got ${describe(value)}`);
}

export function str(item: Item, name: string): string {
  const value = item[name];
  if (typeof value !== 'string') throw new TypeError(`attribute ${name}: expected a string, got ${describe(value)}`);
  return value;
}

export const optStr = (item: Item, name: string): string | undefined => (item[name] === undefined ? undefined : str(item, name));

export function num(item: Item, name: string): number {
  const value = item[name];
  if (typeof value !== 'number') throw new TypeError(`attribute ${name}: expected a number, got ${describe(value)}`);
  return value;
}

const describe = (value: unknown): string => (value === undefined ? 'nothing' : value instanceof Uint8Array ? 'binary' : typeof value);
