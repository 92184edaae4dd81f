// Maintenance: when a cluster's databases need defragmenting, whether it may run now, and the steps.
export * from './maintenance-plan.ts';
export * from './maintenance-rules.ts';
