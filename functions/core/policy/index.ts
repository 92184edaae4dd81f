// Per-cluster policy and its defaults, the dry run, the single-remediator choice.
export * from './dry-run.ts';
export * from './policy.ts';
