// How the CLI says what zod refused, wherever it refused it (the run config, a --policy file, the
// policy the flags make): one `field: problem` per issue, joined by "; ", in plain words where zod
// would say "Too small: expected number to be >0". A raw ZodError never reaches the user.
import type { z } from 'zod';
import { policySchema, UNKNOWN_FIELD, type Policy, type PolicyInput } from '../../functions/core/policy/index.ts';

const a = (type: string): string => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

function bound(issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig>, least: boolean): string | undefined {
  const n = Number(issue.code === 'too_small' ? issue.minimum : issue.maximum);
  const inclusive = issue.inclusive !== false;
  switch (issue.origin) {
    case 'number':
    case 'int':
      if (least && n === 0) return inclusive ? 'must not be negative' : 'must be positive';
      return `must be ${least ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than'} ${n}`;
    case 'string':
      if (least && n === 1) return 'must not be empty';
      return `must be ${least ? 'at least' : 'at most'} ${n} characters`;
    case 'array':
      if (least && n === 1) return 'must list at least one';
      return `must list ${least ? 'at least' : 'at most'} ${n}`;
    default:
      return undefined;
  }
}

/**
 * A parse-level error map: zod's default messages in plain words. A schema's own message still
 * wins (zod prefers it), so only the defaults change.
 */
export function plainWords(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.input === undefined) return 'is required';
  switch (issue.code) {
    case 'too_small':
      return bound(issue, true);
    case 'too_big':
      return bound(issue, false);
    case 'invalid_type':
      return issue.expected === 'int' ? 'must be a whole number' : `must be ${a(issue.expected)}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return undefined;
  }
}

/** `clusters[0].policy.grace`. */
export const formatPath = (p: readonly PropertyKey[]): string =>
  p.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)), '');

/** Each issue as `field: problem`, joined by "; ", one per unknown key; `root` names the whole value. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root: string): string {
  return issues
    .flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => `${formatPath([...issue.path, key])}: ${UNKNOWN_FIELD}`)
        : [`${formatPath(issue.path) || root}: ${issue.message}`],
    )
    .join('; ');
}

/** The policy's issues, in plain words, for an edge to rename to its own fields. */
export function policyIssues(input: PolicyInput): z.core.$ZodIssue[] {
  const parsed = policySchema.safeParse(input, { error: plainWords });
  return parsed.success ? [] : parsed.error.issues;
}

/** A policy field's path under `policy`, as a config's cluster or a --policy file names it. */
const underPolicy = (path: readonly PropertyKey[]): PropertyKey[] => ['policy', ...path];

/**
 * The policy, or `fail(…)` naming each field that is wrong (`policy.lockLeaseMs: must be
 * positive`); `named` gives a field's path as the edge's user wrote it (a flag, say).
 */
export function checkedPolicy(
  input: PolicyInput,
  fail: (message: string) => Error,
  named: (path: readonly PropertyKey[]) => PropertyKey[] = underPolicy,
): Policy {
  const parsed = policySchema.safeParse(input, { error: plainWords });
  if (!parsed.success)
    throw fail(
      describeIssues(
        parsed.error.issues.map((issue) => ({ ...issue, path: named(issue.path) })),
        'policy',
      ),
    );
  return parsed.data;
}
