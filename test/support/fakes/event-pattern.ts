// EventBridge event patterns, only as far as this project's rules use them: exact values in
// arrays (a field matches when it equals one of them, or, for an array field, when any element
// does) and nested objects. Every other operator (prefix, suffix, anything-but, numeric, exists,
// cidr, equals-ignore-case, wildcard, $or) is refused when the rule is loaded, so a rule relying
// on one fails the test instead of matching differently than EventBridge would.

type Exact = string | number | boolean | null;
type Node = { kind: 'values'; values: Exact[] } | { kind: 'object'; fields: [string, Node][] };

export class UnsupportedPatternError extends Error {
  constructor(where: string, path: string, problem: string) {
    super(`${where}: event pattern at ${path || '(top)'}: ${problem}`);
    this.name = 'UnsupportedPatternError';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const isExact = (value: unknown): value is Exact => value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

function compileObject(pattern: Record<string, unknown>, path: string, where: string): Node {
  const keys = Object.keys(pattern);
  if (keys.length === 0) throw new UnsupportedPatternError(where, path, 'an empty object matches nothing useful; EventBridge refuses it');
  const fields = keys.map((key): [string, Node] => {
    const at = path ? `${path}.${key}` : key;
    if (key.startsWith('$')) throw new UnsupportedPatternError(where, at, `operator "${key}" is not implemented by this fake`);
    if (key === 'Ref' || key.startsWith('Fn::')) {
      throw new UnsupportedPatternError(where, at, `an unresolved CloudFormation intrinsic ("${key}") is not a pattern`);
    }
    return [key, compileValue(pattern[key], at, where)];
  });
  return { kind: 'object', fields };
}

function compileValue(value: unknown, path: string, where: string): Node {
  if (isObject(value)) return compileObject(value, path, where);
  if (!Array.isArray(value)) {
    throw new UnsupportedPatternError(where, path, `${JSON.stringify(value)} must be an array of values or an object`);
  }
  if (value.length === 0) throw new UnsupportedPatternError(where, path, 'an empty array matches nothing; EventBridge refuses it');
  const values = value.map((item) => {
    if (isExact(item)) return item;
    if (isObject(item)) {
      const operators = Object.keys(item)
        .map((k) => `"${k}"`)
        .join(', ');
      throw new UnsupportedPatternError(where, path, `operator ${operators || '{}'} is not implemented by this fake (only exact values and nested objects)`);
    }
    throw new UnsupportedPatternError(where, path, `${JSON.stringify(item)} is not an exact value`);
  });
  return { kind: 'values', values };
}

function matches(node: Node, value: unknown): boolean {
  if (value === undefined) return false;
  if (Array.isArray(value)) return value.some((item) => matches(node, item));
  if (node.kind === 'values') return node.values.some((exact) => exact === value);
  if (!isObject(value)) return false;
  return node.fields.every(([key, child]) => matches(child, value[key]));
}

export type EventMatcher = (event: unknown) => boolean;

/** Compiles a pattern (an object, or its JSON text as CloudFormation also allows); throws on what it cannot match. */
export function compilePattern(pattern: unknown, where: string): EventMatcher {
  let parsed = pattern;
  if (typeof pattern === 'string') {
    try {
      parsed = JSON.parse(pattern);
    } catch {
      throw new UnsupportedPatternError(where, '', 'the pattern text is not JSON');
    }
  }
  if (!isObject(parsed)) throw new UnsupportedPatternError(where, '', 'a pattern must be a JSON object');
  const root = compileObject(parsed, '', where);
  return (event) => matches(root, event);
}
