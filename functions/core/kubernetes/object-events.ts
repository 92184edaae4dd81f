// Kubernetes Events on the object a decision concerns (a Cluster API Machine, or a Node), pure:
// what one says, and what the Events API and client-go's recorder hold Events to: the note's 1 kB limit (events.k8s.io NoteLengthLimit), the key the same Event is counted again
// under (tools/record EventCorrelator: object, type, reason and message), the Event's name, and the
// spam filter's token bucket per object (tools/record EventSourceObjectSpamFilter).
import { setNewest } from '../common/index.ts';

export type EventType = 'Normal' | 'Warning';

/** What one decision says on its object. */
export interface ObjectEventSaid {
  reason: string;
  note: string;
  type: EventType;
  /** What was done or decided, in a word (events.k8s.io `action`; at most 128 characters). */
  action: string;
}

/**
 * The actions that can come round after round while an incident waits (a retry scheduled, a hold by
 * Cluster API): only their Events are held to the spam filter, so the decisions that move an
 * incident on (approve, move, remove, block, fail, close) always reach the object.
 */
export const WAITING_ACTIONS: readonly string[] = ['Defer', 'Hold'];

/** The object an Event is about (core/v1 ObjectReference). */
export interface InvolvedObject {
  kind: string;
  apiVersion: string;
  /** '' for a cluster-scoped object (a Node). */
  namespace: string;
  name: string;
  uid?: string;
}

/** events.k8s.io/v1 `note`, and core/v1 `message` on Events with an eventTime: at most 1024 bytes. */
export const NOTE_LIMIT_BYTES = 1024;

const ELLIPSIS = '…';

/** The note within NOTE_LIMIT_BYTES (UTF-8), an overlong one cut at a character and ended with an ellipsis. */
export function truncateNote(note: string): string {
  if (Buffer.byteLength(note) <= NOTE_LIMIT_BYTES) return note;
  const room = NOTE_LIMIT_BYTES - Buffer.byteLength(ELLIPSIS);
  let kept = '';
  let bytes = 0;
  for (const char of note) {
    const size = Buffer.byteLength(char);
    if (bytes + size > room) break;
    kept += char;
    bytes += size;
  }
  return `${kept}${ELLIPSIS}`;
}

/** client-go's getEventKey: the same object, type, reason and message are one Event, counted again. */
export const eventKey = (object: InvolvedObject, said: Pick<ObjectEventSaid, 'type' | 'reason' | 'note'>): string =>
  JSON.stringify([object.kind, object.apiVersion, object.namespace, object.name, object.uid ?? '', said.type, said.reason, said.note]);

/** Unix nanoseconds of a clock's milliseconds. */
export const nanosOf = (nowMs: number): bigint => BigInt(Math.floor(nowMs)) * 1_000_000n;

/** client-go's makeEvent: `<object>.<unix nanoseconds in hex>`. */
export const eventName = (objectName: string, nanos: bigint): string => `${objectName}.${nanos.toString(16)}`;

export interface SpamFilterOptions {
  /** Events an object may get at once (client-go: 25). */
  burst: number;
  /** One more allowed per this long (client-go: one per 5 minutes). */
  refillEveryMs: number;
}

export interface SpamFilter {
  /** Whether an Event for `objectKey` may be written at `nowMs`; takes a token when it may. */
  allow(objectKey: string, nowMs: number): boolean;
}

/** A token bucket per object; the buckets of a bounded number of objects are kept (the oldest go). */
export function spamFilter({ burst, refillEveryMs }: SpamFilterOptions, maxObjects = 4_096): SpamFilter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    allow(objectKey, nowMs) {
      const bucket = buckets.get(objectKey) ?? { tokens: burst, at: nowMs };
      const refilled = Math.floor((nowMs - bucket.at) / refillEveryMs);
      if (refilled > 0) Object.assign(bucket, { tokens: Math.min(burst, bucket.tokens + refilled), at: bucket.at + refilled * refillEveryMs });
      if (bucket.tokens >= burst) bucket.at = nowMs;
      setNewest(buckets, objectKey, bucket, maxObjects);
      if (bucket.tokens < 1) return false;
      bucket.tokens -= 1;
      return true;
    },
  };
}
