// Our envelopes as PutEvents entries, and the batches EventBridge accepts: at most 10 entries a call,
// at most 256 KB an entry and a call, sized as EventBridge sizes them (eb-putevent-size).
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { EventEnvelope } from '../../../events/catalogue.ts';

export const MAX_ENTRIES_PER_CALL = 10;
export const MAX_ENTRY_BYTES = 256 * 1024;

export type BusEntry = PutEventsRequestEntry & { Source: string; DetailType: string; Detail: string };

export const toEntry = (event: EventEnvelope, busName: string): BusEntry => ({
  EventBusName: busName,
  Source: event.source,
  DetailType: event.detailType,
  Detail: JSON.stringify(event.detail),
});

const utf8 = (text: string | undefined): number => (text === undefined ? 0 : Buffer.byteLength(text, 'utf8'));

/** Time counts 14 bytes; Source, DetailType, Detail and each resource their UTF-8 bytes. */
export const entrySize = (entry: PutEventsRequestEntry): number =>
  (entry.Time ? 14 : 0) + utf8(entry.Source) + utf8(entry.DetailType) + utf8(entry.Detail) + (entry.Resources ?? []).reduce((sum, r) => sum + utf8(r), 0);

/** Refuses the whole publish before anything is sent: EventBridge would refuse the entry anyway. */
export function assertEntrySizes(entries: readonly BusEntry[]): void {
  for (const entry of entries) {
    const size = entrySize(entry);
    if (size > MAX_ENTRY_BYTES) {
      throw new RangeError(`EventBridge entry ${entry.DetailType} is ${size} bytes, over the ${MAX_ENTRY_BYTES}-byte PutEvents entry limit; nothing was sent`);
    }
  }
}

/** Greedy batches in order, each within both the count and the total-size limit. */
export function batches<T extends PutEventsRequestEntry>(entries: readonly T[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entrySize(entry);
    if (current.length === MAX_ENTRIES_PER_CALL || (current.length > 0 && bytes + size > MAX_ENTRY_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}
