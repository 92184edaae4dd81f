// The check of an incident awaiting its replacement.
export * from './check-replacement.ts';
