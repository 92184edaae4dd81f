// Stuck learners: the periodic check and the clean-up.
export * from './learner-check.ts';
export * from './stuck-learners.ts';
