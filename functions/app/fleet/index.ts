// The fleet guard as remediation holds it: the cluster lock, the store's guard, the fleet's facts and steps.
export * from './cluster-lock.ts';
export * from './fleet-facts.ts';
export * from './fleet-steps.ts';
export * from './store-guard.ts';
