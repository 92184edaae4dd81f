// POLICY_DEFAULTS: the construct's policyDefaults as JSON, laid under every cluster's own policy.
// Read once at a cold start; a bad value fails it with the variable and the field named, rather
// than every incident later with a policy nobody asked for.
import { checkPolicyDefaults, PolicyDefaultsError } from '../adapters/aws/policy-defaults.ts';
import type { PolicyInput } from '../core/policy/index.ts';
import { InvalidEnvError, type Env } from './env.ts';

export const POLICY_DEFAULTS = 'POLICY_DEFAULTS';

/** The defaults, or undefined when the variable is unset or empty (the built-in defaults apply). */
export function policyDefaultsFromEnv(env: Env, functionName: string): PolicyInput | undefined {
  const raw = env[POLICY_DEFAULTS]?.trim();
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new InvalidEnvError(POLICY_DEFAULTS, functionName, `is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  try {
    return checkPolicyDefaults(value);
  } catch (error) {
    if (error instanceof PolicyDefaultsError) throw new InvalidEnvError(POLICY_DEFAULTS, functionName, error.message);
    throw error;
  }
}
