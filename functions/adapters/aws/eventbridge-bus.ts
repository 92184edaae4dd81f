// The bus port on EventBridge PutEvents. PutEvents answers 200 even when some entries failed, so
// FailedEntryCount is checked and only the failed entries are sent again, a bounded number of
// times; what still fails is thrown, so Lambda's retry and the function's DLQ see it.
import { PutEventsCommand, type EventBridgeClient, type PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import type { Bus } from '../../ports/bus.ts';
import { assertEntrySizes, batches, toEntry, type BusEntry } from './eventbridge-entries.ts';

export interface EventBridgeBusOptions {
  client: EventBridgeClient;
  busName: string;
  /** Resends of the failed entries after the first call (default 3). */
  maxResends?: number;
  /** The first resend waits this long, each next one twice as long (default 100 ms). */
  backoffMs?: number;
  /** Injected by tests that count the waits rather than take them. */
  sleep?: (ms: number) => Promise<void>;
}

const BACKOFF_CAP_MS = 2_000;
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createEventBridgeBus(options: EventBridgeBusOptions): Bus {
  const { client, busName } = options;
  const maxResends = options.maxResends ?? 3;
  const backoffMs = options.backoffMs ?? 100;
  const sleep = options.sleep ?? defaultSleep;

  /** Sends one batch; resends what failed; returns what still fails with its last result. */
  async function send(batch: BusEntry[]): Promise<{ entry: BusEntry; result: PutEventsResultEntry }[]> {
    let pending = batch;
    for (let resend = 0; ; resend++) {
      const output = await client.send(new PutEventsCommand({ Entries: pending }));
      if (!output.FailedEntryCount) return [];
      // Results come in request order; a missing result counts as a failure, never as a success.
      const failed = pending
        .map((entry, i) => ({ entry, result: output.Entries?.[i] ?? { ErrorCode: 'MissingResult', ErrorMessage: 'no result for this entry' } }))
        .filter(({ result }) => result.ErrorCode !== undefined || result.EventId === undefined);
      if (failed.length === 0 || resend >= maxResends) return failed;
      await sleep(Math.min(backoffMs * 2 ** resend, BACKOFF_CAP_MS));
      pending = failed.map(({ entry }) => entry);
    }
  }

  return {
    async publish(...events: EventEnvelope[]): Promise<void> {
      const entries = events.map((event) => toEntry(event, busName));
      assertEntrySizes(entries);
      for (const batch of batches(entries)) {
        const failed = await send(batch);
        if (failed.length > 0) {
          const what = failed.map(({ entry, result }) => `${entry.DetailType} (${result.ErrorCode ?? 'unknown'}: ${result.ErrorMessage ?? ''})`);
          throw new Error(
            `EventBridge PutEvents on bus ${busName}: ${failed.length} of ${batch.length} entries still failed after ${maxResends} resends: ${what.join(', ')}`,
          );
        }
      }
    },
  };
}
