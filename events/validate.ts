// Validation at the edge: turns zod issues into a result that names each field and its problem.
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

/** Validate one detail against the schema of its detail type. Defaults are applied to the result. */
export function parseEvent(detailType: string, detail: unknown): ParseResult {
  if (!isDetailType(detailType)) {
    return failure(detailType, [
      { path: 'detailType', problem: `"${detailType}" is not a known detail type; expected one of ${detailTypes.join(', ')}` },
    ]);
  }
  const parsed = detailSchemas[detailType].safeParse(detail, { error: missingIsRequired });
  if (!parsed.success) return failure(detailType, toIssues(parsed.error.issues));
  return { ok: true, event: { source: EVENT_SOURCE, detailType, detail: parsed.data } as EventEnvelope };
}

/** Validate a whole envelope as it arrives at a bus: source, detail type and detail. */
export function parseEnvelope(envelope: unknown): ParseResult {
  const { source, detailType, detail } = (typeof envelope === 'object' && envelope !== null ? envelope : {}) as Record<
    string,
    unknown
  >;
  const name = typeof detailType === 'string' ? detailType : '';
  if (source !== EVENT_SOURCE) {
    return failure(name, [{ path: 'source', problem: `must be "${EVENT_SOURCE}", got ${JSON.stringify(source) ?? 'nothing'}` }]);
  }
  if (typeof detailType !== 'string') return failure(name, [{ path: 'detailType', problem: 'is required' }]);
  return parseEvent(detailType, detail);
}
