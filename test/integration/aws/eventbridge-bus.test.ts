// The EventBridge bus adapter with the real SDK client against the EventBridge fake: batches of at
// most 10 entries and 256 KB, the 256 KB entry refused before sending, failed entries resent alone
// and thrown once the bound is spent.
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_SOURCE, makeEvent, type EventEnvelope } from '../../../events/catalogue.ts';
import { entrySize, MAX_ENTRY_BYTES, toEntry } from '../../../functions/adapters/aws/eventbridge-entries.ts';
import { createEventBridgeBus } from '../../../functions/adapters/aws/eventbridge-bus.ts';
import { startEventBridgeFake, type EventBridgeFake } from '../../support/fakes/eventbridge-fake.ts';
import { loadSample } from '../../unit/events/samples.ts';
import { sdkConfig } from './synth-stack.ts';

const BUS = 'remediation';

const retryDue = (attempt: number) => makeEvent('RetryDue', { ...loadSample('RetryDue'), attempt });
/** A MembersProbed whose entry is exactly `bytes` long, as EventBridge counts it. */
function probedOfSize(bytes: number): EventEnvelope {
  const detail = Object.assign(loadSample('MembersProbed'), { padding: '' });
  const base = entrySize(toEntry(makeEvent('MembersProbed', detail), BUS));
  detail.padding = 'x'.repeat(bytes - base);
  return makeEvent('MembersProbed', detail);
}

describe('EventBridge bus adapter', () => {
  let fake: EventBridgeFake;
  let client: EventBridgeClient;
  let sleeps: number[];
  const bus = (maxResends?: number) => createEventBridgeBus({ client, busName: BUS, maxResends, backoffMs: 50, sleep: async (ms) => void sleeps.push(ms) });

  beforeEach(async () => {
    fake = await startEventBridgeFake({ buses: [BUS] });
    client = new EventBridgeClient(sdkConfig(fake.endpoint));
    sleeps = [];
  });
  afterEach(async () => {
    client.destroy();
    await fake.close();
  });

  it('sends 25 events in calls of 10, 10 and 5, source and detail type from the envelope', async () => {
    const events = Array.from({ length: 25 }, (_, i) => retryDue(i));
    await bus().publish(...events);
    expect(fake.calls.map((c) => c.entries.length)).toEqual([10, 10, 5]);
    const sent = fake.calls.flatMap((c) => c.entries);
    expect(sent.map((e) => [e.Source, e.DetailType, e.EventBusName])).toEqual(events.map(() => [EVENT_SOURCE, 'RetryDue', BUS]));
    expect(sent.map((e) => JSON.parse(e.Detail ?? '') as unknown)).toEqual(events.map((e) => e.detail));
    expect(fake.accepted).toHaveLength(25);
  });

  it('keeps each call within 256 KB too: three 100 KB entries take two calls', async () => {
    await bus().publish(probedOfSize(100_000), probedOfSize(100_000), probedOfSize(100_000));
    expect(fake.calls.map((c) => c.entries.length)).toEqual([2, 1]);
    expect(fake.accepted).toHaveLength(3);
  });

  it('accepts an entry of exactly 256 KB, alone in its call', async () => {
    await bus().publish(retryDue(1), probedOfSize(MAX_ENTRY_BYTES));
    expect(fake.calls.map((c) => c.entries.length)).toEqual([1, 1]);
  });

  it('refuses an entry over 256 KB before sending anything, naming its detail type and size', async () => {
    const big = probedOfSize(MAX_ENTRY_BYTES + 1);
    await expect(bus().publish(retryDue(1), big)).rejects.toThrow(`EventBridge entry MembersProbed is ${MAX_ENTRY_BYTES + 1} bytes`);
    expect(fake.calls).toHaveLength(0);
  });

  it('resends only the failed entries, after a short backoff', async () => {
    fake.failEntries({ match: (e) => e.DetailType === 'RetryRequested', errorCode: 'InternalFailure' });
    const events = [retryDue(1), makeEvent('RetryRequested', loadSample('RetryRequested')), retryDue(2)];
    await bus().publish(...events);
    expect(fake.calls.map((c) => c.entries.map((e) => e.DetailType))).toEqual([['RetryDue', 'RetryRequested', 'RetryDue'], ['RetryRequested']]);
    expect(fake.calls[0]?.results.map((r) => r.ErrorCode)).toEqual([undefined, 'InternalFailure', undefined]);
    expect(fake.accepted.map((a) => a.event['detail-type'])).toEqual(['RetryDue', 'RetryDue', 'RetryRequested']);
    expect(sleeps).toEqual([50]);
  });

  it('throws a partial failure that outlives the bound, naming the entries and their error codes', async () => {
    fake.failEntries({ match: (e) => e.DetailType === 'LeaderMoved', times: Infinity, errorCode: 'ThrottlingException', errorMessage: 'Rate exceeded' });
    const publish = bus(2).publish(retryDue(1), makeEvent('LeaderMoved', loadSample('LeaderMoved')));
    await expect(publish).rejects.toThrow(
      `EventBridge PutEvents on bus ${BUS}: 1 of 2 entries still failed after 2 resends: LeaderMoved (ThrottlingException: Rate exceeded)`,
    );
    // The first call and two resends of the failed entry alone, with doubling waits between.
    expect(fake.calls.map((c) => c.entries.length)).toEqual([2, 1, 1]);
    expect(sleeps).toEqual([50, 100]);
    expect(fake.accepted.map((a) => a.event['detail-type'])).toEqual(['RetryDue']);
  });

  it('an unknown bus fails every entry, and the error says so', async () => {
    const wrong = createEventBridgeBus({ client, busName: 'no-such-bus', maxResends: 0 });
    await expect(wrong.publish(retryDue(1))).rejects.toThrow('RetryDue (ResourceNotFoundException: Event bus no-such-bus does not exist.)');
  });
});
