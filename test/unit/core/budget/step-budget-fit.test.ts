// The budget rule: every step's worst-case budget at the largest cluster a view holds fits its
// Lambda timeout less the margin, or the policy is refused naming the field that drives it.
import { describe, expect, it } from 'vitest';
import { parsePolicy, type PolicyInput } from '../../../../functions/core/policy/policy.ts';
import { stepBudgetMs, type StepName } from '../../../../functions/core/budget/step-budget.ts';
import { budgetProblem } from '../../../../functions/core/budget/step-budget-fit.ts';
import { FUNCTION_TIMEOUTS_MS, LAMBDA_MAX_TIMEOUT_MS, TIMEOUT_MARGIN_MS } from '../../../../functions/core/budget/step-timeouts.ts';
import { VIEW_LIMITS } from '../../../../functions/core/common/view-limits.ts';

const steps: StepName[] = ['probe-members', 'move-leader', 'schedule-retry', 'remediate'];

describe('the step timeouts table', () => {
  it('no timeout is beyond what Lambda allows', () => {
    for (const ms of Object.values(FUNCTION_TIMEOUTS_MS)) expect(ms).toBeLessThanOrEqual(LAMBDA_MAX_TIMEOUT_MS);
  });

  it.each(steps)('%s: the built-in defaults fit its timeout at the largest cluster a view holds', (step) => {
    expect(stepBudgetMs(step, parsePolicy(), VIEW_LIMITS.members)).toBeLessThanOrEqual(FUNCTION_TIMEOUTS_MS[step] - TIMEOUT_MARGIN_MS);
  });

  it('the built-in defaults pass the rule, with their snapshot before each removal, and without it', () => {
    expect(parsePolicy().snapshotBeforeRemove).toBe(true);
    expect(budgetProblem(parsePolicy())).toBeUndefined();
    expect(budgetProblem(parsePolicy({ snapshotBeforeRemove: false }))).toBeUndefined();
  });
});

describe('a policy whose budget is beyond a timeout is refused, naming the field and the numbers', () => {
  const cases: { policy: PolicyInput; field: string; says: string }[] = [
    {
      policy: { snapshotBeforeRemove: true, actuatorTimeoutMs: 600_000 },
      field: 'actuatorTimeoutMs',
      says:
        'remediate needs 994 s at 9 members (3 probes of 2 × the longest probe deadline 180 s + snapshotTimeoutMs 120 s + 9 members × 3 paths × callTimeoutMs 54 s' +
        ' + the wait for a new leader, 10 × electionTimeoutMs 10 s + actuatorTimeoutMs 600 s + the store and the bus 30 s),' +
        ' but its Lambda timeout is 900 s less a 60 s margin: lower actuatorTimeoutMs',
    },
    { policy: { snapshotBeforeRemove: true, snapshotTimeoutMs: 600_000 }, field: 'snapshotTimeoutMs', says: 'remediate needs 1,174 s at 9 members (' },
    {
      policy: { callTimeoutMs: 10_000 },
      field: 'callTimeoutMs',
      says: 'move-leader needs 690 s at 9 members (2 probes of 2 × the longest probe deadline 120 s + 2 × 9 members × 3 paths × callTimeoutMs 540 s',
    },
    {
      policy: { callTimeoutMs: 60_000, pathOrder: ['direct'] },
      field: 'callTimeoutMs',
      says: 'probe-members needs 150 s at 9 members (1 probe of 2 × the longest probe deadline 120 s',
    },
    // The default snapshot's 120 s are in it.
    {
      policy: { electionTimeoutMs: 50_000 },
      field: 'electionTimeoutMs',
      says: 'remediate needs 1,184 s at 9 members (3 probes of 2 × the longest probe deadline 180 s + snapshotTimeoutMs 120 s',
    },
  ];
  it.each(cases)('$field: $says', ({ policy, field, says }) => {
    const problem = budgetProblem(parsePolicy(policy));
    expect(problem?.field).toBe(field);
    expect(problem?.problem).toContain(says);
  });

  it('the same policy on fewer paths fits: the rule counts the paths the policy tries', () => {
    expect(budgetProblem(parsePolicy({ callTimeoutMs: 10_000, pathOrder: ['direct'] }))).toBeUndefined();
  });
});
