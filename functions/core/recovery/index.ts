// When quorum is lost: the recovery plan a person follows.
export * from './recovery-plan.ts';
