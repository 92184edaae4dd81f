// move-leader's decision before any move.
export * from './decide-incident.ts';
