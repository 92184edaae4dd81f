// A policy as a person writes it, in run's config and in register's --policy file: each duration
// under its plain name as a string (`grace: "60s"`) or under the policy's own (`graceMs: 60000`).
// The written fields are made from the policy schema's keys, nested ones too, so a field the
// schema gains is written at once, and an unknown one is refused at any depth; what each value
// may be, and what it defaults to, the schema alone says.
import { z } from 'zod';
import { policySchema, type PolicyInput } from '../../functions/core/policy/index.ts';
import { notADuration, parseDuration } from './duration.ts';
import { policyIssues } from './zod-issues.ts';

type Fields = Record<string, unknown>;
type Shape = Readonly<Record<string, z.ZodType>>;

const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/** "60s" or a number of milliseconds; whether it may be 0, or must be at least 100ms, is the policy's to say. */
const duration = z.unknown().transform((value, ctx) => {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string') {
    const ms = parseDuration(value);
    if (ms !== undefined) return ms;
    ctx.addIssue({ code: 'custom', message: notADuration(value) });
  } else {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} is not a duration (use a string such as "60s", or milliseconds)` });
  }
  return z.NEVER;
});

/** The schema inside .default(), .prefault() and .optional(). */
function innermost(schema: z.ZodType): z.ZodType {
  let inner = schema;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodPrefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  return inner;
}

/** `grace` for graceMs: a number of milliseconds named `<name>Ms` is a duration. */
const plainName = (key: string, schema: z.ZodType): string | undefined =>
  key.endsWith('Ms') && innermost(schema) instanceof z.ZodNumber ? key.slice(0, -2) : undefined;

const nestedShape = (schema: z.ZodType): Shape | undefined => {
  const inner = innermost(schema);
  return inner instanceof z.ZodObject ? inner.shape : undefined;
};

/** The written fields of a level: a duration under both names, an object as its own written level, any other field as is. */
function writtenFields(shape: Shape): z.ZodType<Fields> {
  const fields = Object.entries(shape).flatMap(([key, schema]): [string, z.ZodType][] => {
    const nested = nestedShape(schema);
    if (nested) return [[key, writtenFields(nested).optional()]];
    const plain = plainName(key, schema);
    return plain === undefined
      ? [[key, z.unknown().optional()]]
      : [
          [key, duration.optional()],
          [plain, duration.optional()],
        ];
  });
  return z.strictObject(Object.fromEntries(fields));
}

/** The policy's input the written fields say, in the order written: each duration under the policy's own name, milliseconds winning. */
function inputOf(written: Fields, shape: Shape): Fields {
  const input: Fields = {};
  for (const [name, value] of Object.entries(written)) {
    // The written fields are strict: a name that is not the schema's is a duration's plain name.
    const key = Object.hasOwn(shape, name) ? name : `${name}Ms`;
    if (value === undefined || (key !== name && written[key] !== undefined)) continue;
    const nested = nestedShape(shape[key]!);
    input[key] = nested && isFields(value) ? inputOf(value, nested) : value;
  }
  return input;
}

/** A policy field's path as written: `lockLease` for lockLeaseMs, `backoff.base` for backoff.baseMs, when so written. */
function writtenPath(written: Fields, path: readonly PropertyKey[]): PropertyKey[] {
  const [first, ...rest] = path;
  if (typeof first !== 'string') return [...path];
  const plain = first.endsWith('Ms') ? first.slice(0, -2) : undefined;
  const named = plain !== undefined && written[first] === undefined && written[plain] !== undefined ? plain : first;
  const inner = written[first];
  return [named, ...(isFields(inner) ? writtenPath(inner, rest) : rest)];
}

/**
 * A written policy, checked whole by the policy's own rules, so each problem names the field as
 * the user wrote it; it parses to the policy's input, defaults not yet applied (an edge may add to it).
 */
export const writtenPolicySchema: z.ZodType<PolicyInput, unknown> = writtenFields(policySchema.shape).transform((written, ctx): PolicyInput => {
  const input = inputOf(written, policySchema.shape);
  const issues = policyIssues(input);
  for (const issue of issues) ctx.addIssue({ code: 'custom', path: writtenPath(written, issue.path), message: issue.message });
  return issues.length === 0 ? input : z.NEVER;
});
