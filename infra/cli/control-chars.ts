// Text from outside (member names, etcd's errors, a report's fields, what a state file holds)
// reaches a terminal only with its control characters made visible: a raw newline could forge a
// line of output ("reason: …"), an ESC could drive the terminal, a bidi override could make text
// read other than it is. Human output passes through here; --json output does not (JSON escapes
// what it must, and a reader wants the exact value).

/** C0, DEL, C1, the bidi marks, overrides and isolates, and the Unicode line and paragraph separators. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const hex = (code: number, digits: number) => code.toString(16).padStart(digits, '0');

/**
 * C0 as a shell or JavaScript writes it (`\n`, `\x1b`); the rest as `\u…`, which a JSON reader
 * also takes, so a log line that ends in JSON stays JSON.
 */
function visible(char: string): string {
  const code = char.charCodeAt(0);
  return NAMED[char] ?? (code < 0x20 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`);
}

/** One line's worth of text with every control character escaped; a second pass changes nothing. */
export const escapeControls = (text: string): string => text.replace(CONTROLS, visible);

/** Whether `text` holds any character escapeControls would escape: for an edge that refuses them outright. */
export const hasControls = (text: string): boolean => text.search(CONTROLS) !== -1;

const isPlainObject = (value: object): boolean => {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * The same value with every string in it (keys too) escaped, for a renderer that builds many
 * lines out of one structure: each line it joins is then its own.
 */
export function escapeControlsIn<T>(value: T): T {
  if (typeof value === 'string') return escapeControls(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => escapeControlsIn(item)) as T;
  if (typeof value === 'object' && value !== null && isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [escapeControls(key), escapeControlsIn(item as unknown)])) as T;
  }
  return value;
}
