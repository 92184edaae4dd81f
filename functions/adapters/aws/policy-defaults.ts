// Policy defaults for every cluster of a directory (the construct's policyDefaults): checked once,
// then laid under each cluster's own policy, whose fields win. Merged as input, before the schema
// fills in the built-in defaults, so a field a cluster leaves out takes the default's value.
import { firstPolicyProblem, parsePolicy, type PolicyInput } from '../../core/policy/index.ts';
import { budgetProblem } from '../../core/budget/index.ts';

/** `field: problem`, for the caller to say where the defaults came from; field '' is the whole value. */
export class PolicyDefaultsError extends Error {
  readonly field: string;
  readonly problem: string;
  constructor(field: string, problem: string) {
    super(`${field || '(the value)'}: ${problem}`);
    this.name = 'PolicyDefaultsError';
    this.field = field;
    this.problem = problem;
  }
}

type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Throws PolicyDefaultsError naming the first field that is wrong, an unknown one at any depth
 * too (it would apply to no cluster), or one that gives a step a budget beyond its Lambda timeout
 * (step-budget-fit.ts) for every cluster that leaves it out; returns the defaults as given.
 */
export function checkPolicyDefaults(input: unknown): PolicyInput {
  if (!isFields(input)) throw new PolicyDefaultsError('', 'must be a JSON object of policy fields, e.g. {"graceMs":120000}');
  const wrong = firstPolicyProblem(input) ?? budgetProblem(parsePolicy(input));
  if (wrong) throw new PolicyDefaultsError(wrong.field, wrong.problem);
  // Checked whole above; kept unparsed so only what it names is a default.
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
