// Incident ids for fixtures, in the shape the stores mint (functions/core/incident/incident-id.ts): each
// one numbered, so a test can name several, tell them apart in a failure, and name one no store holds.
export const testIncidentId = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
