// remediate: under the cluster lock, the fresh probe, the snapshot, the removal, the wait for a new leader.
export * from './remediate.ts';
export * from './removal-permission.ts';
export * from './removed-by-another.ts';
export * from './snapshot-meter.ts';
export * from './snapshot-step.ts';
export * from './take-snapshot.ts';
export * from './wait-for-leader.ts';
