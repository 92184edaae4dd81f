// The budget rule: every step's worst-case budget under a cluster's policy, at the largest cluster
// a view holds, fits its function's timeout with a margin. Checked where a policy meets Lambda: the
// construct's defaults (synth and cold start), register, and each directory read on AWS. The local
// runtime (`run`) has no timeouts, so there a step may take what its deadlines allow and the rule
// does not apply. Pure.
import type { Policy, PolicyProblem } from '../policy/index.ts';
import { stepBudgetParts, type BudgetPart, type StepName } from './step-budget.ts';
import { FUNCTION_TIMEOUTS_MS, TIMEOUT_MARGIN_MS } from './step-timeouts.ts';
import { VIEW_LIMITS } from '../common/index.ts';

const STEPS: readonly StepName[] = ['probe-members', 'move-leader', 'schedule-retry', 'remediate'];

/** "1,012 s". */
const seconds = (ms: number): string => `${(ms / 1_000).toLocaleString('en-US', { maximumFractionDigits: 1 })} s`;

const sum = (parts: readonly BudgetPart[]): number => parts.reduce((total, part) => total + part.ms, 0);

/** The first step whose budget does not fit, named by the policy field of its largest term; undefined when all fit. */
export function budgetProblem(policy: Policy): PolicyProblem | undefined {
  for (const step of STEPS) {
    const parts = stepBudgetParts(step, policy, VIEW_LIMITS.members);
    const needs = sum(parts);
    const timeout = FUNCTION_TIMEOUTS_MS[step];
    if (needs <= timeout - TIMEOUT_MARGIN_MS) continue;
    // The largest term the policy sets is the one to lower.
    const field = [...parts].sort((a, b) => b.ms - a.ms).find((part) => part.fields.length > 0)?.fields[0] ?? '';
    const terms = parts.map((part) => `${part.what} ${seconds(part.ms)}`).join(' + ');
    const timeoutSaid = `its Lambda timeout is ${seconds(timeout)} less a ${seconds(TIMEOUT_MARGIN_MS)} margin`;
    return {
      field,
      problem: `${step} needs ${seconds(needs)} at ${VIEW_LIMITS.members} members (${terms}), but ${timeoutSaid}${field ? `: lower ${field}` : ''}`,
    };
  }
  return undefined;
}
