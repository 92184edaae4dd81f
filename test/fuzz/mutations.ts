// Generators for the fuzz tests: every detail type's committed sample, mutated in one place, with
// the field path the refusal must name.
import fc from 'fast-check';
import { detailSchemas, detailTypes, type DetailType } from '../../events/catalogue.ts';
import { MAX_DETAIL_BYTES, type EventIssue } from '../../events/validate.ts';
import { loadSample } from '../unit/events/samples.ts';

export type Path = (string | number)[];

/** As events/validate.ts writes a path: `a.b[0].c`; '(detail)' for the whole. */
export const pathText = (path: Path): string =>
  path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${key}` : key), '') || '(detail)';

export const samples = Object.fromEntries(detailTypes.map((t) => [t, loadSample(t)])) as unknown as Record<DetailType, Record<string, unknown>>;

const clone = <T>(value: T): T => structuredClone(value);

/** Every path into a value, objects and arrays included (the root excluded). */
function pathsOf(value: unknown, path: Path = []): { path: Path; value: unknown }[] {
  if (typeof value !== 'object' || value === null) return [];
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([key, v]) => [{ path: [...path, key], value: v }, ...pathsOf(v, [...path, key])]);
}

export const leafPaths = Object.fromEntries(detailTypes.map((t) => [t, pathsOf(samples[t])])) as Record<DetailType, { path: Path; value: unknown }[]>;

/** Top-level fields the schema needs (no default, not optional). */
export const requiredFields = Object.fromEntries(
  detailTypes.map((t) => {
    const shape = (detailSchemas[t] as unknown as { shape: Record<string, { safeParse(v: unknown): { success: boolean } }> }).shape;
    return [t, Object.keys(shape).filter((k) => !shape[k]!.safeParse(undefined).success)];
  }),
) as Record<DetailType, string[]>;

/** Sets (or with `undefined` and `remove`, deletes) the value at a path of a copy; own properties only, so `__proto__` is a key. */
export function setAt(detail: unknown, path: Path, value: unknown, remove = false): unknown {
  const copy = clone(detail) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (remove) delete node[last];
  else Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** One mutated event and what its refusal must name. */
export interface Mutation {
  kind: string;
  detailType: string;
  detail: unknown;
  /** The mutated path. */
  path: string;
  /**
   * 'exact': the refusal names exactly this path; 'within': every issue is at this path, an
   * ancestor of it below the root, or under it. 'maybe': the mutation may be valid; if refused, 'within'.
   */
  expect: 'exact' | 'within' | 'maybe';
  problem?: RegExp;
}

const typeArb = fc.constantFrom(...detailTypes);

/** JSON values of another type than the sample's. */
function wrongTypeFor(sample: unknown): fc.Arbitrary<unknown> {
  const all: [string, fc.Arbitrary<unknown>][] = [
    ['string', fc.string({ maxLength: 20 })],
    ['number', fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 })],
    [
      'object',
      fc.dictionary(
        fc.string({ maxLength: 8 }).filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k)),
        fc.jsonValue({ maxDepth: 1 }),
        { maxKeys: 3 },
      ),
    ],
  ];
  const kind = sample === null ? 'null' : Array.isArray(sample) ? 'array' : typeof sample;
  return fc.oneof(...all.filter(([k]) => k !== kind).map(([, a]) => a));
}

export const missingField: fc.Arbitrary<Mutation> = typeArb
  .chain((t) => fc.record({ t: fc.constant(t), key: fc.constantFrom(...requiredFields[t]) }))
  .map(({ t, key }) => ({
    kind: 'missing field',
    detailType: t,
    detail: setAt(samples[t], [key], undefined, true),
    path: key,
    expect: 'exact',
    problem: /is required/,
  }));

export const wrongType: fc.Arbitrary<Mutation> = typeArb
  .chain((t) =>
    fc.constantFrom(...Object.keys(samples[t])).chain((key) => fc.record({ t: fc.constant(t), key: fc.constant(key), value: wrongTypeFor(samples[t][key]) })),
  )
  .map(({ t, key, value }) => ({ kind: 'wrong type', detailType: t, detail: setAt(samples[t], [key], value), path: key, expect: 'within' }));

/** Any path at any depth set to any JSON value: may happen to be valid. */
export const deepValue: fc.Arbitrary<Mutation> = typeArb
  .chain((t) => fc.record({ t: fc.constant(t), at: fc.constantFrom(...leafPaths[t]), value: fc.jsonValue({ maxDepth: 2 }) }))
  .map(({ t, at, value }) => ({ kind: 'deep value', detailType: t, detail: setAt(samples[t], at.path, value), path: pathText(at.path), expect: 'maybe' }));

const reservedKeys = ['__proto__', 'constructor', 'prototype'] as const;

/** A reserved key put as an own property on the detail or any object in it. */
export const pollution: fc.Arbitrary<Mutation> = typeArb
  .chain((t) => {
    const objects = [[] as Path, ...leafPaths[t].filter((p) => typeof p.value === 'object' && p.value !== null && !Array.isArray(p.value)).map((p) => p.path)];
    return fc.record({
      t: fc.constant(t),
      at: fc.constantFrom(...objects),
      key: fc.constantFrom(...reservedKeys),
      value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant({ polluted: true, isAdmin: true })),
    });
  })
  .map(({ t, at, key, value }) => ({
    kind: 'prototype pollution',
    detailType: t,
    detail: setAt(samples[t], [...at, key], value),
    path: pathText([...at, key]),
    expect: 'exact',
    problem: /reserved key/,
  }));

/** Durations (fields ending in Ms) and attempts: negative, fractional, astronomically large, not finite. */
const absurdAttempt = fc.oneof(
  fc.integer({ min: -1e9, max: -1 }),
  fc.constantFrom(-0.5, 0.5, -1e308, 1e308, Number.MAX_VALUE, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER * 4, NaN, Infinity, -Infinity),
);
/** A duration in ms: also anything over a day (seconds or µs written as ms). */
const absurdDuration = fc.oneof(
  absurdAttempt.filter((n) => !(n > 0 && n < 86_400_000)),
  fc.double({ min: 86_400_001, max: 1e300, noNaN: true }),
);
const numericPaths = (t: DetailType) =>
  leafPaths[t].filter((p) => p.path[0] !== 'evidence' && typeof p.value === 'number' && /^(attempt|.*Ms)$/.test(String(p.path.at(-1))));

export const absurdNumbers: fc.Arbitrary<Mutation> = fc
  .constantFrom(...detailTypes.filter((t) => numericPaths(t).length > 0))
  .chain((t) =>
    fc
      .constantFrom(...numericPaths(t))
      .chain((at) => fc.record({ t: fc.constant(t), at: fc.constant(at), value: at.path.at(-1) === 'attempt' ? absurdAttempt : absurdDuration })),
  )
  .map(({ t, at, value }) => ({ kind: 'absurd number', detailType: t, detail: setAt(samples[t], at.path, value), path: pathText(at.path), expect: 'exact' }));

/** The detail types that carry an attempt (the periodic checks' requests, LearnerCheckDue and HygieneCheckDue, and leader hygiene's events do not). */
const withAttempt = fc.constantFrom(...detailTypes.filter((t) => 'attempt' in detailSchemas[t].shape));

export const negativeAttempt: fc.Arbitrary<Mutation> = fc
  .record({ t: withAttempt, value: fc.integer({ min: -2_147_483_648, max: -1 }) })
  .map(({ t, value }) => ({
    kind: 'negative attempt',
    detailType: t,
    detail: setAt(samples[t], ['attempt'], value),
    path: 'attempt',
    expect: 'exact',
    problem: /≥ 0/,
  }));

const topStringFields = (t: DetailType) => Object.keys(samples[t]).filter((k) => typeof samples[t][k] === 'string');

/** Any code point, lone surrogates included; may be valid (a member name may be anything). */
const anyUnicode = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc.constantFrom('\u202e\u0000', '\u3000\u3000', '\ufeff', '💥'.repeat(300), 'Ω'.repeat(1_001), '\ud800', 'a\u0301\u0301\u0301'),
);

export const unicode: fc.Arbitrary<Mutation> = typeArb
  .chain((t) => fc.record({ t: fc.constant(t), key: fc.constantFrom(...topStringFields(t)), value: anyUnicode }))
  .map(({ t, key, value }) => ({ kind: 'unicode', detailType: t, detail: setAt(samples[t], [key], value), path: key, expect: 'maybe' }));

/** Over the size limit: a string field, or an unknown field (which the schema alone would strip). */
export const oversized: fc.Arbitrary<Mutation> = typeArb
  .chain((t) =>
    fc.record({
      t: fc.constant(t),
      key: fc.constantFrom(...topStringFields(t), 'padding', 'x-extra'),
      unit: fc.constantFrom('x', 'é', '💥', '\u0000'),
      factor: fc.double({ min: 1.01, max: 3, noNaN: true }),
    }),
  )
  .map(({ t, key, unit, factor }) => ({
    kind: 'oversized',
    detailType: t,
    detail: setAt(samples[t], [key], unit.repeat(Math.ceil((MAX_DETAIL_BYTES * factor) / Buffer.byteLength(unit)))),
    path: key,
    expect: 'exact',
  }));

/** Every mutation that must be refused, for the edges. */
export const mustFail = (types: readonly DetailType[] = detailTypes): fc.Arbitrary<Mutation> =>
  fc.oneof(missingField, wrongType, pollution, absurdNumbers, negativeAttempt, oversized).filter((m) => (types as readonly string[]).includes(m.detailType));

const related = (issue: string, path: string): boolean =>
  issue === path ||
  issue.startsWith(`${path}.`) ||
  issue.startsWith(`${path}[`) ||
  (issue !== '(detail)' && (path.startsWith(`${issue}.`) || path.startsWith(`${issue}[`)));

/** Why the issues do not name the mutation as expected, or undefined when they do. */
export function misnamed(m: Mutation, issues: readonly EventIssue[]): string | undefined {
  if (issues.length === 0) return 'no issue at all';
  if (m.expect === 'exact') {
    const hit = issues.find((i) => i.path === m.path);
    if (!hit) return `no issue names ${m.path}`;
    if (m.problem && !m.problem.test(hit.problem)) return `${m.path}: "${hit.problem}" does not say ${String(m.problem)}`;
    return undefined;
  }
  const stray = issues.find((i) => !related(i.path, m.path));
  return stray ? `issue at ${stray.path} for a mutation of ${m.path}` : undefined;
}
