// What a cold-start child prints back to the bench: one marker line, its JSON after the marker.
export const MARKER = 'COLDSTART ';

export interface ChildResult {
  importMs: number;
  callMs: number;
  /** The import of a chunk after the call (the etcd client's, as the first etcd access loads it), when asked. */
  laterMs?: number;
  /** `ok`, `imported` (no call asked for), or the error the first call ended with. */
  outcome: string;
}
