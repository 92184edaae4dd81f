// Stuck learners: when one is stuck, and when the periodic check looks.
export * from './learner-check.ts';
export * from './stuck-learner.ts';
