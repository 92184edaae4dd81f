// Maintenance: when a cluster's databases need defragmenting, whether it may run now, the next
// step, and the record a run is journaled in.
export * from './maintenance-plan.ts';
export * from './maintenance-record.ts';
export * from './maintenance-rules.ts';
