// etcdctl's `-w json` prints uint64 ids (member, leader, cluster) as bare JSON numbers, which
// JSON.parse would round to the nearest double. Every bare number is turned into a string first.

/** A string literal (skipped whole, so digits inside it stay put) or a bare JSON number. */
const TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** Parses JSON with every number kept as its exact decimal text. */
export function parseJsonNumbersAsText(text: string): unknown {
  return JSON.parse(text.replace(TOKEN, (token) => (token.startsWith('"') ? token : `"${token}"`)));
}

export type JsonObject = Record<string, unknown>;

export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A uint64 field as decimal text; Go's encoder omits zero values, so absent means 0. */
export function decimalField(object: JsonObject, key: string): string {
  const value = object[key];
  if (value === undefined) return '0';
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw new TypeError(`${key} is not an unsigned integer: ${JSON.stringify(value)}`);
  return value;
}

export function stringField(object: JsonObject, key: string): string {
  const value = object[key];
  if (value === undefined) return '';
  if (typeof value !== 'string') throw new TypeError(`${key} is not a string: ${JSON.stringify(value)}`);
  return value;
}

/** A response header (Go's etcdserverpb.ResponseHeader), as the etcd3 adapter receives it; absent is all zeros. */
export function headerOf(header: unknown): { cluster_id: string; member_id: string; revision: string; raft_term: string } {
  const fields = isObject(header) ? header : {};
  return {
    cluster_id: decimalField(fields, 'cluster_id'),
    member_id: decimalField(fields, 'member_id'),
    revision: decimalField(fields, 'revision'),
    raft_term: decimalField(fields, 'raft_term'),
  };
}
