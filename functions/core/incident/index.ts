// The incident: its id, its record and journal, how it ends, a failed step, which incident a report joins, the metrics it counts.
export * from './incident-endings.ts';
export * from './incident-id.ts';
export * from './incident.ts';
export * from './journal-words.ts';
export * from './journal.ts';
export * from './metric-names.ts';
export * from './report-match.ts';
export * from './step-failed.ts';
