// Every wait an incident takes: the backoff after a failure, a look again, the wait after an unreachable move, the incident's deadline.
export * from './incident-deadline.ts';
export * from './resample-wait.ts';
export * from './retry-after-backoff.ts';
export * from './unreachable-move-wait.ts';
