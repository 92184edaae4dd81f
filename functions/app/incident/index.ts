// The incident pipeline: open or join and probe, schedule a retry, a failed step, the sweep, a withdrawn report.
export * from './last-delivery.ts';
export * from './probe-members.ts';
export * from './schedule-retry.ts';
export * from './step-failed.ts';
export * from './sweep.ts';
export * from './withdraw.ts';
