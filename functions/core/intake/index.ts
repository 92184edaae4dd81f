// Outside health signals, read without I/O: which machines they name and whether they are ours to act on.
export * from './intake-signals.ts';
export * from './intake-sources.ts';
