import { describe, expect, it } from 'vitest';
import { makeEvent, type DetailType, type EventEnvelope } from '../../../events/catalogue.ts';
import {
  createInProcessBus,
  type BusFailure,
  type DeadLetter,
  type FunctionHandlers,
  type InProcessBusOptions,
} from '../../../functions/adapters/local/in-process-bus.ts';
import { loadSample } from './samples.ts';

const DRAIN = { timeoutMs: 5_000 };

function harness(handlers: FunctionHandlers, redelivery: Pick<InProcessBusOptions, 'redeliveryDelaysMs' | 'retryable'> = {}) {
  const deadLetters: DeadLetter[] = [];
  const failures: BusFailure[] = [];
  const bus = createInProcessBus({
    handlers,
    onDeadLetter: (dead) => deadLetters.push(dead),
    onError: (failure) => failures.push(failure),
    ...redelivery,
  });
  const seen: DetailType[] = [];
  bus.subscribe((event) => seen.push(event.detailType));
  return { bus, deadLetters, failures, seen };
}

const unhealthy = makeEvent('MemberUnhealthy', loadSample('MemberUnhealthy'));

describe('in-process bus', () => {
  it('redelivers an event whose handler threw, as Lambda retries, and reports it only after the last try', async () => {
    let calls = 0;
    const { bus, failures } = harness(
      {
        'probe-members': async () => {
          calls++;
          throw new Error(`try ${calls}`);
        },
      },
      { redeliveryDelaysMs: [5, 5] },
    );
    await bus.publish(unhealthy);
    await bus.drain(DRAIN);
    expect(calls).toBe(3);
    expect(failures.map((f) => [f.functionName, String(f.error)])).toEqual([['probe-members', 'Error: try 3']]);
  });

  it('stops redelivering once a try succeeds, and never redelivers what cannot succeed', async () => {
    let calls = 0;
    const flaky = harness(
      {
        'probe-members': async () => {
          if (calls++ === 0) throw new Error('once');
        },
      },
      { redeliveryDelaysMs: [5, 5] },
    );
    await flaky.bus.publish(unhealthy);
    await flaky.bus.drain(DRAIN);
    expect(calls).toBe(2);
    expect(flaky.failures).toEqual([]);

    let permanent = 0;
    const never = harness(
      {
        'probe-members': async () => {
          permanent++;
          throw new RangeError('never');
        },
      },
      { redeliveryDelaysMs: [5, 5], retryable: (error) => !(error instanceof RangeError) },
    );
    await never.bus.publish(unhealthy);
    await never.bus.drain(DRAIN);
    expect(permanent).toBe(1);
    expect(never.failures).toHaveLength(1);
  });

  it('close() drops the redeliveries still waiting, so drain ends', async () => {
    let calls = 0;
    const { bus } = harness(
      {
        'probe-members': async () => {
          calls++;
          throw new Error('fails');
        },
      },
      { redeliveryDelaysMs: [60_000] },
    );
    await bus.publish(unhealthy);
    await expect(bus.drain({ timeoutMs: 50 })).rejects.toThrow(/did not drain/);
    bus.close();
    await bus.drain({ timeoutMs: 50 });
    expect(calls).toBe(1);
    expect(bus.inFlight).toBe(0);
  });

  it.each([
    ['MemberUnhealthy', 'probe-members'],
    ['RetryDue', 'probe-members'],
    ['MembersProbed', 'move-leader'],
    ['RetryRequested', 'schedule-retry'],
    ['RemediationApproved', 'remediate'],
  ] as const)('routes %s to %s only', async (detailType, expected) => {
    const calls: string[] = [];
    const record = (name: string) => async (event: EventEnvelope) => void calls.push(`${name}:${event.detailType}`);
    const { bus } = harness({
      'probe-members': record('probe-members'),
      'move-leader': record('move-leader'),
      'schedule-retry': record('schedule-retry'),
      remediate: record('remediate'),
    });
    await bus.publish(makeEvent(detailType, loadSample(detailType)));
    await bus.drain(DRAIN);
    expect(calls).toEqual([`${expected}:${detailType}`]);
  });

  it('hands handlers the parsed detail, defaults applied', async () => {
    const { attempt: _attempt, ...withoutAttempt } = loadSample('MemberUnhealthy');
    const received: EventEnvelope[] = [];
    const { bus } = harness({ 'probe-members': async (event) => void received.push(event) });
    await bus.publish({ ...unhealthy, detail: withoutAttempt } as EventEnvelope);
    await bus.drain(DRAIN);
    expect(received.map((e) => (e.detail as { attempt?: number }).attempt)).toEqual([0]);
  });

  it('runs handlers after publish returns, never inside it', async () => {
    let running = false;
    let ranInsidePublish = false;
    const { bus } = harness({ 'probe-members': async () => void (ranInsidePublish = running) });
    running = true;
    const published = bus.publish(unhealthy);
    running = false;
    await published;
    expect(bus.inFlight).toBe(1);
    await bus.drain(DRAIN);
    expect(ranInsidePublish).toBe(false);
    expect(bus.inFlight).toBe(0);
  });

  it('dead-letters an invalid event with the field named, and still delivers the valid ones', async () => {
    const calls: string[] = [];
    const { bus, deadLetters, seen } = harness({ 'probe-members': async (e) => void calls.push(e.detailType) });
    const { clusterId: _gone, ...noCluster } = unhealthy.detail;
    const invalid = { ...unhealthy, detail: noCluster } as EventEnvelope;
    await bus.publish(invalid, makeEvent('RetryDue', loadSample('RetryDue')));
    await bus.drain(DRAIN);
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]?.event).toBe(invalid);
    expect(deadLetters[0]?.error.issues.map((i) => i.path)).toEqual(['clusterId']);
    expect(deadLetters[0]?.error.summary).toContain('clusterId');
    expect(seen).toEqual(['RetryDue']);
    expect(calls).toEqual(['RetryDue']);
  });

  it('dead-letters an unknown detail type and a foreign source', async () => {
    const { bus, deadLetters, seen } = harness({});
    await bus.publish(
      { source: 'etcd-remediator', detailType: 'MemberSad', detail: {} } as unknown as EventEnvelope,
      { ...unhealthy, source: 'elsewhere' } as unknown as EventEnvelope,
    );
    expect(deadLetters.map((d) => d.error.issues[0]?.path)).toEqual(['detailType', 'source']);
    expect(seen).toEqual([]);
  });

  it('drain waits for chained publishes to the end of the flow', async () => {
    const { bus, seen } = harness({
      'probe-members': async (event) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        await bus.publish(makeEvent('MembersProbed', { ...loadSample('MembersProbed'), attempt: 'attempt' in event.detail ? event.detail.attempt : 0 }));
      },
      'move-leader': async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        await bus.publish(makeEvent('RemediationApproved', loadSample('RemediationApproved')));
      },
      remediate: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        await bus.publish(makeEvent('RemediationCompleted', loadSample('RemediationCompleted')));
      },
    });
    await bus.publish(unhealthy);
    await bus.drain(DRAIN);
    expect(seen).toEqual(['MemberUnhealthy', 'MembersProbed', 'RemediationApproved', 'RemediationCompleted']);
    expect(bus.inFlight).toBe(0);
  });

  it('reports a throwing handler through onError and keeps going', async () => {
    const boom = new Error('boom');
    const { bus, failures } = harness({
      'probe-members': async () => {
        throw boom;
      },
    });
    await bus.publish(unhealthy, unhealthy);
    await bus.drain(DRAIN);
    expect(failures.map((f) => [f.functionName, f.error])).toEqual([
      ['probe-members', boom],
      ['probe-members', boom],
    ]);
  });

  it('drain with a deadline rejects while a handler never finishes', async () => {
    const { bus } = harness({ 'probe-members': () => new Promise<void>(() => {}) });
    await bus.publish(unhealthy);
    await expect(bus.drain({ timeoutMs: 50 })).rejects.toThrow(/1 handler\(s\) still in flight/);
  });

  it('unsubscribe stops notifications', async () => {
    const { bus } = harness({});
    const seen: string[] = [];
    const unsubscribe = bus.subscribe((e) => seen.push(e.detailType));
    await bus.publish(unhealthy);
    unsubscribe();
    await bus.publish(unhealthy);
    expect(seen).toEqual(['MemberUnhealthy']);
  });

  it('drain resolves at once when idle', async () => {
    const { bus } = harness({});
    await expect(bus.drain(DRAIN)).resolves.toBeUndefined();
  });
});
