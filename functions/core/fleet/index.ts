// The fleet's gates: a pause, a storm, the holds kept in each cluster's etcd, and their sentences.
export * from './cluster-holds.ts';
export * from './fleet-gate.ts';
export * from './fleet-storm.ts';
export * from './fleet-words.ts';
