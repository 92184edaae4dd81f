// Policy defaults for every cluster of a directory (the construct's policyDefaults): checked once,
// then laid under each cluster's own policy, whose fields win. Merged as input, before the schema
// fills in the built-in defaults, so a field a cluster leaves out takes the default's value.
import { z } from 'zod';
import { policySchema, type PolicyInput } from '../../core/policy.ts';

/** `field: problem`, for the caller to say where the defaults came from. */
export class PolicyDefaultsError extends Error {
  readonly field: string;
  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.name = 'PolicyDefaultsError';
    this.field = field;
  }
}

type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The fields an object schema knows, through .default() and .optional(); undefined for a non-object. */
function shapeOf(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  return inner instanceof z.ZodObject ? (inner.shape) : undefined;
}

/** The schema drops keys it does not know; a misspelt default would apply to no cluster, without a word. */
function unknownField(input: Fields, shape: Record<string, z.ZodType>, prefix = ''): string | undefined {
  for (const [key, value] of Object.entries(input)) {
    const field = shape[key];
    if (!field) return `${prefix}${key}`;
    const inner = shapeOf(field);
    const found = inner && isFields(value) ? unknownField(value, inner, `${prefix}${key}.`) : undefined;
    if (found) return found;
  }
  return undefined;
}

/** Throws PolicyDefaultsError naming the first field that is wrong; returns the defaults as given. */
export function checkPolicyDefaults(input: unknown): PolicyInput {
  if (!isFields(input)) throw new PolicyDefaultsError('(the value)', 'must be a JSON object of policy fields, e.g. {"graceMs":120000}');
  const unknown = unknownField(input, policySchema.shape);
  if (unknown) throw new PolicyDefaultsError(unknown, 'unknown field');
  const parsed = policySchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new PolicyDefaultsError(issue.path.map(String).join('.') || '(the value)', issue.message);
  }
  // Checked field by field above; kept unparsed so only what it names is a default.
  return input;
}

/** A cluster's own policy over the defaults: its fields win; an object field (backoff) merges field by field. */
export function underDefaults(defaults: PolicyInput | undefined, own: Readonly<Fields>): Fields {
  return mergeUnder(defaults ?? {}, own);
}

function mergeUnder(base: Readonly<Fields>, top: Readonly<Fields>): Fields {
  const merged: Fields = { ...base };
  for (const [key, value] of Object.entries(top)) {
    if (value === undefined) continue;
    const below = merged[key];
    merged[key] = isFields(below) && isFields(value) ? mergeUnder(below, value) : value;
  }
  return merged;
}
