// Validation at the edge: turns zod issues into a result that names each field and its problem.
import { inspect } from 'node:util';
import type { z } from 'zod';
import { detailSchemas, detailTypes, EVENT_SOURCE, isDetailType, type EventEnvelope } from './catalogue.ts';

export interface EventIssue {
  /** Dotted path into the detail, e.g. 'target.memberName' or 'view.members[0].id'; '(detail)' for the whole. */
  path: string;
  problem: string;
}

export interface EventParseError {
  detailType: string;
  issues: EventIssue[];
  /** One line naming the field(s) and problem(s). */
  summary: string;
}

export type ParseResult = { ok: true; event: EventEnvelope } | { ok: false; error: EventParseError };

const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((acc, key) => {
    if (typeof key === 'number') return `${acc}[${key}]`;
    const name = String(key);
    return acc ? `${acc}.${name}` : name;
  }, '');

// zod's default for a missing field is "expected string, received undefined"; say "is required".
const missingIsRequired = (issue: z.core.$ZodRawIssue): string | undefined =>
  (issue.code === 'invalid_type' || issue.code === 'invalid_value') && issue.input === undefined ? 'is required' : undefined;

function toIssues(issues: readonly z.core.$ZodIssue[]): EventIssue[] {
  return issues.flatMap((issue) => {
    // One entry per unknown key, so the path names the offending field itself.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), problem: 'is not a known field' }));
    }
    return [{ path: formatPath(issue.path) || '(detail)', problem: issue.message }];
  });
}

function failure(detailType: string, issues: EventIssue[]): { ok: false; error: EventParseError } {
  const summary = `${detailType || '(no detail type)'} is invalid: ${issues.map((i) => `${i.path}: ${i.problem}`).join('; ')}`;
  return { ok: false, error: { detailType, issues, summary } };
}

/** EventBridge's limit on one entry; a detail this large could never be put on the deployed bus. */
export const MAX_DETAIL_BYTES = 256 * 1024;

/** Keys that reach an object's prototype when copied with `obj[key] = value`: refused anywhere in a detail. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Deeper than any detail the catalogue describes; past it the input is refused rather than walked. */
const MAX_DEPTH = 32;

/**
 * What zod cannot say about the raw input, each at its path: keys that could pollute a prototype
 * (zod drops or strips them silently), values JSON cannot carry (a detail must survive the bus
 * and its dead letter), cycles, and nesting past any the catalogue has.
 */
function rawIssues(value: unknown, path: PropertyKey[] = [], seen = new WeakSet<object>()): EventIssue[] {
  const at = () => formatPath(path) || '(detail)';
  switch (typeof value) {
    case 'bigint':
    case 'function':
    case 'symbol':
      return [{ path: at(), problem: `is a ${typeof value}, which JSON cannot carry` }];
    case 'number':
      return Number.isFinite(value) ? [] : [{ path: at(), problem: `is ${String(value)}, which JSON cannot carry` }];
    case 'object':
      break;
    default:
      return [];
  }
  if (value === null) return [];
  if (seen.has(value)) return [{ path: at(), problem: 'refers to itself (a cycle)' }];
  if (path.length >= MAX_DEPTH) return [{ path: at(), problem: `is nested deeper than ${MAX_DEPTH} levels` }];
  seen.add(value);
  const issues: EventIssue[] = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => issues.push(...rawIssues(item, [...path, i], seen)));
  } else {
    for (const key of Object.keys(value)) {
      if (RESERVED_KEYS.has(key)) {
        issues.push({ path: formatPath([...path, key]), problem: 'is a reserved key (it could reach an object prototype) and is not accepted' });
        continue;
      }
      issues.push(...rawIssues((value as Record<string, unknown>)[key], [...path, key], seen));
    }
  }
  seen.delete(value);
  return issues;
}

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/** A detail over MAX_DETAIL_BYTES, named by its largest field. Only called once rawIssues found nothing, so it serializes. */
function sizeIssue(detail: unknown): EventIssue | undefined {
  const total = bytesOf(detail);
  if (total <= MAX_DETAIL_BYTES) return undefined;
  const fields = typeof detail === 'object' && detail !== null && !Array.isArray(detail) ? Object.entries(detail) : [];
  const largest = fields.map(([key, v]) => ({ key, bytes: bytesOf(v) })).sort((a, b) => b.bytes - a.bytes)[0];
  const problem = `makes the detail ${total} bytes, over the limit of ${MAX_DETAIL_BYTES} bytes`;
  return largest
    ? { path: largest.key, problem: `is ${largest.bytes} bytes and ${problem}` }
    : { path: '(detail)', problem: `is ${total} bytes, over the limit of ${MAX_DETAIL_BYTES} bytes` };
}

/**
 * The checks every edge makes before a schema's: reserved keys, values JSON cannot carry, cycles,
 * nesting and size, each named by its path. For an edge with a schema of its own (the intake).
 */
export function inputIssues(detail: unknown): EventIssue[] {
  const raw = rawIssues(detail);
  if (raw.length > 0) return raw;
  const oversized = sizeIssue(detail);
  return oversized ? [oversized] : [];
}

/**
 * The raw input as a dead letter keeps it: JSON when it can be, else a description that still
 * names what it was (a bigint, a cycle), so keeping it never throws.
 */
export function payloadOf(input: unknown): string {
  try {
    const text = JSON.stringify(input);
    if (text !== undefined) return text;
  } catch {
    // A bigint or a cycle: kept as Node describes it.
  }
  return inspect(input, { depth: 6, breakLength: Infinity, maxStringLength: 10_000 });
}

/** Validate one detail against the schema of its detail type. Defaults are applied to the result. */
export function parseEvent(detailType: string, detail: unknown): ParseResult {
  if (!isDetailType(detailType)) {
    return failure(String(detailType), [
      {
        path: 'detailType',
        problem: `${JSON.stringify(detailType) ?? String(detailType)} is not a known detail type; expected one of ${detailTypes.join(', ')}`,
      },
    ]);
  }
  const unfit = inputIssues(detail);
  if (unfit.length > 0) return failure(detailType, unfit);
  const parsed = detailSchemas[detailType].safeParse(detail, { error: missingIsRequired });
  if (!parsed.success) return failure(detailType, toIssues(parsed.error.issues));
  return { ok: true, event: { source: EVENT_SOURCE, detailType, detail: parsed.data } as EventEnvelope };
}

/** Validate a whole envelope as it arrives at a bus: source, detail type and detail. */
export function parseEnvelope(envelope: unknown): ParseResult {
  const { source, detailType, detail } = (typeof envelope === 'object' && envelope !== null ? envelope : {}) as Record<string, unknown>;
  const name = typeof detailType === 'string' ? detailType : '';
  if (source !== EVENT_SOURCE) {
    return failure(name, [{ path: 'source', problem: `must be "${EVENT_SOURCE}", got ${JSON.stringify(source) ?? 'nothing'}` }]);
  }
  if (typeof detailType !== 'string') return failure(name, [{ path: 'detailType', problem: 'is required' }]);
  return parseEvent(detailType, detail);
}
