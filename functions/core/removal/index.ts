// Removing a member: the lock and record guard, the snapshot, MemberRemove's refusals, the resume after a removal.
export * from './guard-failure.ts';
export * from './member-removal.ts';
export * from './remediation-history.ts';
export * from './remediation-steps.ts';
export * from './resume-after-removal.ts';
export * from './snapshot-steps.ts';
