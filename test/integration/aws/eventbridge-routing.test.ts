// The EventBridge fake routes by the rules of a CDK-synthesized template: each detail type reaches
// the functions the catalogue names and no other, as the event object Lambda receives; a pattern
// operator the fake does not implement is refused when the rules are loaded.
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { detailTypes, EVENT_SOURCE, functionNames, makeEvent, subscriptionsOf, type FunctionName } from '../../../events/catalogue.ts';
import { createEventBridgeBus } from '../../../functions/adapters/aws/eventbridge-bus.ts';
import { eventBridgeSchemaFor, type EventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import type { CfnTemplate } from '../../support/fakes/cfn-template.ts';
import {
  DEFAULT_TARGET_RETRY,
  defaultRetryDelayMs,
  startEventBridgeFake,
  type EventBridgeFake,
  type EventBridgeFakeOptions,
} from '../../support/fakes/eventbridge-fake.ts';
import { loadSample } from '../../unit/events/samples.ts';
import { sdkConfig, synthesize, type SynthesizedStack } from './synth-stack.ts';

const ruleTemplate = (pattern: unknown, extra: Record<string, unknown> = {}): CfnTemplate => ({
  Resources: {
    Bus: { Type: 'AWS::Events::EventBus', Properties: { Name: 'b' } },
    Rule: {
      Type: 'AWS::Events::Rule',
      Properties: { EventBusName: { Ref: 'Bus' }, EventPattern: pattern, Targets: [{ Id: 't', Arn: { 'Fn::GetAtt': ['Fn', 'Arn'] }, ...extra }] },
    },
  },
});

describe('EventBridge fake: routing by the synthesized rules', () => {
  let stack: SynthesizedStack;
  let fake: EventBridgeFake | undefined;
  let client: EventBridgeClient | undefined;

  beforeAll(() => {
    stack = synthesize();
  });
  afterEach(async () => {
    client?.destroy();
    await fake?.close();
    fake = undefined;
  });

  const start = async (template = stack.template, options: Omit<EventBridgeFakeOptions, 'template'> = {}) => {
    fake = await startEventBridgeFake({ template, ...options });
    client = new EventBridgeClient(sdkConfig(fake.endpoint));
    return { fake, client };
  };

  it('delivers each detail type to the functions the catalogue routes it to, and to no other', async () => {
    const { fake, client } = await start();
    const received = Object.fromEntries(functionNames.map((fn) => [fn, [] as string[]])) as Record<FunctionName, string[]>;
    for (const fn of functionNames) fake.onTarget(stack.functionIds[fn], (event) => void received[fn].push(event['detail-type']));
    const all = detailTypes.map((t) => makeEvent(t, loadSample(t)));
    await createEventBridgeBus({ client, busName: stack.busName }).publish(...all);
    await fake.idle();
    for (const fn of functionNames) expect(received[fn].sort()).toEqual([...subscriptionsOf(fn)].sort());
    expect(fake.deliveries.every((d) => d.status === 'delivered')).toBe(true);
    // Outcomes and informational events are accepted and reach no target.
    expect(fake.accepted).toHaveLength(detailTypes.length);
    expect(fake.deliveries).toHaveLength(functionNames.reduce((n, fn) => n + subscriptionsOf(fn).length, 0));
  });

  it("delivers the event object Lambda receives, which the handler's own schema accepts", async () => {
    const { fake, client } = await start();
    const got: EventBridgeEvent[] = [];
    fake.onTarget(stack.functionIds['probe-members'], (event) => void got.push(event));
    const detail = loadSample('RetryDue');
    await createEventBridgeBus({ client, busName: stack.busName }).publish(makeEvent('RetryDue', detail));
    await fake.idle();
    expect(got).toEqual([
      {
        version: '0',
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        'detail-type': 'RetryDue',
        source: EVENT_SOURCE,
        account: fake.account,
        time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
        region: fake.region,
        resources: [],
        detail,
      },
    ]);
    expect(eventBridgeSchemaFor(subscriptionsOf('probe-members')).safeParse(got[0]).success).toBe(true);
  });

  it("routes nothing from another source; a handler that throws is retried per the target's RetryPolicy, then its event goes to the DLQ", async () => {
    const { fake, client } = await start(stack.template, { compression: 1_000 });
    const tries: number[] = [];
    fake.onTarget(stack.functionIds['probe-members'], () => {
      tries.push(performance.now());
      throw new Error('handler down');
    });
    const entry = (Source: string) => ({ Source, DetailType: 'RetryDue', Detail: JSON.stringify(loadSample('RetryDue')), EventBusName: stack.busName });
    const out = await client.send(new PutEventsCommand({ Entries: [entry('someone-else'), entry(EVENT_SOURCE)] }));
    expect(out.FailedEntryCount).toBe(0);
    await fake.idle();
    // The synthesized target: retryAttempts 2 and a dead-letter queue.
    const dlq = Object.entries(stack.template.Resources ?? {}).find(([id, r]) => r.Type === 'AWS::SQS::Queue' && id.startsWith('RuleDlq'))?.[0];
    expect(fake.deliveries.map((d) => [d.event.source, d.status, String(d.error), d.tries, d.deadLetter])).toEqual([
      [EVENT_SOURCE, 'failed', 'Error: handler down', 3, dlq],
    ]);
    // Backoff between the tries: 1 s, then 2 s, at a compression of 1000.
    expect(tries[1]! - tries[0]!).toBeGreaterThanOrEqual(1 - 0.5);
    expect(tries[2]! - tries[1]!).toBeGreaterThanOrEqual(2 - 0.5);
  });

  it('retries as documented without a RetryPolicy: up to 185 times over 24 hours, with a backoff that grows', () => {
    expect(DEFAULT_TARGET_RETRY).toEqual({ maximumRetryAttempts: 185, maximumEventAgeInSeconds: 24 * 3600 });
    expect([1, 2, 3, 20].map(defaultRetryDelayMs)).toEqual([1_000, 2_000, 4_000, 300_000]);
  });

  it('each delivery takes the hop latency after PutEvents answered', async () => {
    const { fake, client } = await start(stack.template, { latencyMs: 150 });
    let reachedAt = 0;
    fake.onTarget(stack.functionIds['probe-members'], () => void (reachedAt = performance.now()));
    const putAt = performance.now();
    await client.send(
      new PutEventsCommand({
        Entries: [{ Source: EVENT_SOURCE, DetailType: 'RetryDue', Detail: JSON.stringify(loadSample('RetryDue')), EventBusName: stack.busName }],
      }),
    );
    await fake.idle();
    expect(reachedAt - putAt).toBeGreaterThanOrEqual(150 - 1);
  });

  it('at least once: an event picked for it reaches its target twice', async () => {
    const { fake, client } = await start(stack.template, { duplicate: (event) => event['detail-type'] === 'RetryDue' });
    const got: string[] = [];
    fake.onTarget(stack.functionIds['probe-members'], (event) => void got.push(event.id));
    const entry = (DetailType: string) => ({ Source: EVENT_SOURCE, DetailType, Detail: JSON.stringify(loadSample('RetryDue')), EventBusName: stack.busName });
    await client.send(new PutEventsCommand({ Entries: [entry('RetryDue'), entry('MemberUnhealthy')] }));
    await fake.idle();
    const [retryDue, unhealthy] = fake.accepted.map((a) => a.event.id);
    expect(got.sort()).toEqual([retryDue, retryDue, unhealthy].sort());
  });

  it('refuses 11 entries in one call, as EventBridge does', async () => {
    const { client } = await start();
    const entry = { Source: EVENT_SOURCE, DetailType: 'RetryDue', Detail: '{}', EventBusName: stack.busName };
    await expect(client.send(new PutEventsCommand({ Entries: Array.from({ length: 11 }, () => entry) }))).rejects.toMatchObject({
      name: 'ValidationException',
    });
  });

  it('matches exact values in nested detail objects and any element of an array field', async () => {
    const pattern = { source: [EVENT_SOURCE], detail: { clusterId: ['prod-eu-1'], target: { memberName: ['etcd-a', 'etcd-b'] } } };
    const { fake } = await start(ruleTemplate(pattern));
    const hits: unknown[] = [];
    fake.onTarget('Fn', (event) => void hits.push(event.detail));
    const put = (detail: unknown) => fake.putEvents([{ Source: EVENT_SOURCE, DetailType: 'X', Detail: JSON.stringify(detail), EventBusName: 'b' }]);
    put({ clusterId: 'prod-eu-1', target: { memberName: 'etcd-b' } });
    put({ clusterId: ['other', 'prod-eu-1'], target: { memberName: 'etcd-a' } });
    put({ clusterId: 'prod-eu-1', target: { memberName: 'etcd-c' } });
    put({ clusterId: 'prod-eu-1' });
    put({ clusterId: 'prod-eu-2', target: { memberName: 'etcd-a' } });
    await fake.idle();
    expect(hits).toEqual([
      { clusterId: 'prod-eu-1', target: { memberName: 'etcd-b' } },
      { clusterId: ['other', 'prod-eu-1'], target: { memberName: 'etcd-a' } },
    ]);
  });

  it.each([
    ['prefix', { 'detail-type': [{ prefix: 'Retry' }] }, 'operator "prefix" is not implemented'],
    ['suffix', { 'detail-type': [{ suffix: 'Due' }] }, 'operator "suffix" is not implemented'],
    ['anything-but', { 'detail-type': [{ 'anything-but': ['LeaderMoved'] }] }, 'operator "anything-but" is not implemented'],
    ['numeric', { detail: { attempt: [{ numeric: ['>', 0] }] } }, 'at detail.attempt: operator "numeric" is not implemented'],
    ['exists', { detail: { reason: [{ exists: true }] } }, 'operator "exists" is not implemented'],
    ['equals-ignore-case', { source: [{ 'equals-ignore-case': 'ETCD-REMEDIATOR' }] }, 'operator "equals-ignore-case"'],
    ['wildcard', { source: [{ wildcard: 'etcd-*' }] }, 'operator "wildcard"'],
    ['cidr', { detail: { ip: [{ cidr: '10.0.0.0/8' }] } }, 'operator "cidr"'],
    ['$or', { $or: [{ source: ['a'] }, { source: ['b'] }] }, 'operator "$or" is not implemented'],
    ['a bare value', { source: EVENT_SOURCE }, 'must be an array of values or an object'],
    ['an empty array', { source: [] }, 'an empty array matches nothing'],
  ])('refuses a rule using %s when loading it', async (_name, pattern, message) => {
    await expect(startEventBridgeFake({ template: ruleTemplate(pattern) })).rejects.toThrow(message);
    await expect(startEventBridgeFake({ template: ruleTemplate(pattern) })).rejects.toThrow('rule Rule: event pattern at');
  });

  it('refuses a rule CDK rendered with Match.prefix, naming the rule', async () => {
    const withPrefix = synthesize((s, bus, fn) => {
      new events.Rule(s, 'PrefixRule', {
        eventBus: bus,
        eventPattern: { source: [EVENT_SOURCE], detailType: events.Match.prefix('Remediation') },
        targets: [new targets.LambdaFunction(fn)],
      });
    });
    await expect(startEventBridgeFake({ template: withPrefix.template })).rejects.toThrow(
      /rule PrefixRule[0-9A-F]{8}: event pattern at detail-type: operator "prefix"/,
    );
  });

  it('refuses a target with an input transformation: its handler would not get the event', async () => {
    const template = ruleTemplate({ source: [EVENT_SOURCE] }, { InputPath: '$.detail' });
    await expect(startEventBridgeFake({ template })).rejects.toThrow('rule Rule, target t: InputPath is not implemented');
  });
});
