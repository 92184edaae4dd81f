// How long each step may take: the probe's deadline, each step's budget under a policy, each function's timeout.
export * from './probe-deadline.ts';
export * from './step-budget-fit.ts';
export * from './step-budget.ts';
export * from './step-timeouts.ts';
