// plan(): the preconditions as named checks, the quorum gate, and who leads deciding how the target goes.
export * from './candidates.ts';
export * from './check-cluster-identity.ts';
export * from './check-no-space.ts';
export * from './plan-checks.ts';
export * from './plan-context.ts';
export * from './plan-leadership.ts';
export * from './plan.ts';
export * from './quorum-gate-words.ts';
export * from './quorum-gate.ts';
export * from './removal-permission.ts';
