// The intake on the harness's fakes: each outside health signal becomes a MemberUnhealthy for the
// member on the machine it names; what cannot be mapped or read is a dead letter with the reason.
import { readFileSync } from 'node:fs';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DetailOf, EventEnvelope } from '../../../../events/catalogue.ts';
import type { IntakeDeps, IntakeResult } from '../../../../functions/app/intake/intake.ts';
import type { MemberLocation } from '../../../../functions/ports/cluster-directory.ts';
import { registryOf } from '../../../support/directory-registry.ts';
import { createIntakeHandler } from '../../../../functions/intake/handler.ts';
import { createProbeMembersHandler } from '../../../../functions/probe-members/handler.ts';
import { toEventBridgeEvent } from '../../../../functions/lambda/eventbridge.ts';
import { localContext } from '../../../../infra/runtime/lambda-context.ts';
import { harness, T0, type Harness } from '../harness.ts';

const INSTANCE = 'i-0a1b2c3d4e5f60718';
const NODE = 'prod-eu-1-cp-a';

type Json = Record<string, unknown> & { detail: Record<string, unknown> };
const sample = (name: string): Json => JSON.parse(readFileSync(new URL(`../../../../events/samples/intake/${name}.json`, import.meta.url), 'utf8')) as Json;
const withDetail = (event: Json, detail: Record<string, unknown>): Json => ({ ...event, detail: { ...event.detail, ...detail } });

let h: Harness;
let deps: IntakeDeps;
const instances = new Map<string, MemberLocation>();
const nodes = new Map<string, MemberLocation>();

beforeEach(() => {
  h = harness();
  instances.clear();
  nodes.clear();
  instances.set(INSTANCE, { clusterId: 'c1', memberName: 'etcd-0' });
  nodes.set(NODE, { clusterId: 'c1', memberName: 'etcd-0' });
  deps = {
    store: h.deps.store,
    bus: h.deps.bus,
    clock: h.clock,
    log: new Logger({ serviceName: 'intake', logLevel: 'SILENT' }),
    directory: {
      ...registryOf(h.deps.directory),
      findByInstance: async (id) => instances.get(id),
      findByNode: async (name) => nodes.get(name),
    },
  };
});
afterEach(async () => h.close());

const handle = (event: unknown): Promise<IntakeResult> => createIntakeHandler(deps)(event, localContext('intake'));
const reported = () => h.events.filter((e): e is EventEnvelope<'MemberUnhealthy'> => e.detailType === 'MemberUnhealthy').map((e) => e.detail);
const deadLetters = () => h.deps.store.listDeadLetters();

/** What every report of the member on INSTANCE carries, whatever the source. */
const forEtcd0 = (fields: Partial<DetailOf<'MemberUnhealthy'>>) => ({
  clusterId: 'c1',
  attempt: 0,
  at: new Date(T0).toISOString(),
  target: { memberName: 'etcd-0' },
  ...fields,
});

describe('each source becomes a MemberUnhealthy for the member on the machine it names', () => {
  it.each(['stopping', 'stopped', 'shutting-down', 'terminated'])('an EC2 instance that is %s', async (state) => {
    const result = await handle(withDetail(sample('ec2-instance-state-change'), { state }));
    expect(reported()).toEqual([forEtcd0({ reason: `EC2 instance ${INSTANCE} is ${state}`, source: 'ec2', observedAt: '2025-06-01T12:00:00.000Z' })]);
    expect(result).toMatchObject({ signal: 'EC2 Instance State-change Notification', deadLetters: [] });
    expect(await deadLetters()).toEqual([]);
  });

  it('a StatusCheckFailed alarm going to ALARM, observed when the alarm changed state', async () => {
    await handle(sample('cloudwatch-alarm-status-check'));
    const [report] = reported();
    expect(report).toMatchObject(forEtcd0({ source: 'cloudwatch-alarm', observedAt: '2025-06-01T12:00:04.985Z' }));
    expect(report!.reason).toMatch(
      /^CloudWatch alarm prod-eu-1-cp-a-status-check is in ALARM on StatusCheckFailed for instance i-0a1b2c3d4e5f60718: Threshold Crossed/,
    );
  });

  it('an AWS Health event naming the instance', async () => {
    await handle(sample('aws-health-event'));
    expect(reported()).toEqual([
      forEtcd0({
        reason: `AWS Health AWS_EC2_INSTANCE_STORE_DRIVE_PERFORMANCE_DEGRADED (issue) names instance ${INSTANCE}: The instance store drive of your instance is performing below expectations.`,
        source: 'aws-health',
        observedAt: '2025-06-01T12:00:10.000Z',
      }),
    ]);
  });

  it('a MemberUnhealthy from another tool, naming a node: mapped to its cluster and member', async () => {
    await handle(sample('member-unhealthy'));
    expect(reported()).toEqual([
      forEtcd0({ reason: 'MachineHealthCheck: Node prod-eu-1-cp-a NotReady for 5m', source: 'mhc', observedAt: '2025-06-01T12:00:14Z' }),
    ]);
  });

  it('a MemberUnhealthy invoked directly with its cluster and member name: published as it is', async () => {
    const detail = {
      clusterId: 'c1',
      target: { memberName: 'etcd-2' },
      reason: 'by hand',
      source: 'ops',
      observedAt: '2025-06-01T11:59:00Z',
      at: '2025-06-01T11:59:01Z',
    };
    await handle(detail);
    expect(reported()).toEqual([{ ...detail, attempt: 0 }]);
  });

  it('what it publishes opens an incident in probe-members', async () => {
    await handle(sample('ec2-instance-state-change'));
    const probe = createProbeMembersHandler({ ...h.deps, log: new Logger({ serviceName: 'probe-members', logLevel: 'SILENT' }) });
    await probe(toEventBridgeEvent({ detailType: 'MemberUnhealthy', detail: reported()[0] }), localContext('probe-members'));
    const [incident] = await h.deps.store.listIncidents({ clusterId: 'c1' });
    expect(incident).toMatchObject({ targetKey: 'memberName=etcd-0', state: 'open', reason: `EC2 instance ${INSTANCE} is stopping` });
  });
});

describe('signals that say nothing about ill health are logged, not reported or dead-lettered', () => {
  it.each([
    { what: 'an instance that is running', event: () => withDetail(sample('ec2-instance-state-change'), { state: 'running' }), why: /is running/ },
    {
      what: 'an alarm back to OK',
      event: () => withDetail(sample('cloudwatch-alarm-status-check'), { state: { value: 'OK', timestamp: '2025-06-01T12:10:00.000+0000' } }),
      why: /went to OK, not ALARM/,
    },
    {
      what: 'an alarm on another metric',
      event: () => {
        const e = sample('cloudwatch-alarm-status-check');
        const metric = { metricStat: { metric: { namespace: 'AWS/EC2', name: 'CPUUtilization', dimensions: { InstanceId: INSTANCE } } } };
        return withDetail(e, { configuration: { metrics: [metric] } });
      },
      why: /watches CPUUtilization, not StatusCheckFailed/,
    },
    { what: 'a closed AWS Health event', event: () => withDetail(sample('aws-health-event'), { statusCode: 'closed' }), why: /is closed/ },
  ])('$what', async ({ event, why }) => {
    const result = await handle(event());
    expect(result.ignored).toMatch(why);
    expect(reported()).toEqual([]);
    expect(await deadLetters()).toEqual([]);
  });
});

describe('an unknown machine is a dead letter naming it, and nothing is published', () => {
  it.each([
    { source: 'EC2', name: 'ec2-instance-state-change' },
    { source: 'CloudWatch', name: 'cloudwatch-alarm-status-check' },
    { source: 'AWS Health', name: 'aws-health-event' },
  ])('$source', async ({ name }) => {
    instances.clear();
    const event = sample(name);
    const result = await handle(event);
    expect(reported()).toEqual([]);
    const [dead] = await deadLetters();
    expect(dead).toMatchObject({ source: 'intake', detailType: event['detail-type'], payload: JSON.stringify(event), receivedAt: T0 });
    expect(dead!.error).toBe(`instanceId ${INSTANCE} is not registered in the cluster directory: no etcd member is known to run on it`);
    expect(result.deadLetters).toEqual([{ id: dead!.id, error: dead!.error }]);
  });

  it('a node nobody registered, in a report without a cluster', async () => {
    nodes.clear();
    await handle(sample('member-unhealthy'));
    expect(reported()).toEqual([]);
    expect((await deadLetters())[0]!.error).toBe(`nodeName ${NODE} is not registered in the cluster directory, and the report names no clusterId`);
  });

  it('of two instances a Health event names, the known one is reported and the other kept', async () => {
    const other = 'i-0fedcba9876543210';
    await handle(withDetail(sample('aws-health-event'), { affectedEntities: [{ entityValue: INSTANCE }, { entityValue: other }] }));
    expect(reported().map((r) => r.target)).toEqual([{ memberName: 'etcd-0' }]);
    expect((await deadLetters()).map((d) => d.error)).toEqual([
      `instanceId ${other} is not registered in the cluster directory: no etcd member is known to run on it`,
    ]);
  });
});

describe('a malformed or misdirected event is a dead letter saying what is wrong', () => {
  const ec2 = () => sample('ec2-instance-state-change');
  it.each([
    {
      what: 'an EC2 event without an instance id',
      event: () => ({ ...ec2(), detail: { state: 'stopped' } }),
      error: 'EC2 Instance State-change Notification is invalid: detail.instance-id: is required',
    },
    {
      what: 'an EC2 event from another source',
      event: () => ({ ...ec2(), source: 'my.app' }),
      error: /^EC2 Instance State-change Notification is invalid: source: /,
    },
    { what: 'an event with an unreadable time', event: () => ({ ...ec2(), time: 'yesterday' }), error: /time: must be a date and time/ },
    {
      what: 'a StatusCheckFailed alarm without an instance',
      event: () => {
        const metric = { metricStat: { metric: { namespace: 'AWS/EC2', name: 'StatusCheckFailed', dimensions: { AutoScalingGroupName: 'cp' } } } };
        return withDetail(sample('cloudwatch-alarm-status-check'), { configuration: { metrics: [metric] } });
      },
      error: 'alarm prod-eu-1-cp-a-status-check is on StatusCheckFailed but names no instance (no InstanceId dimension)',
    },
    {
      what: 'a Health event naming no instance',
      event: () => ({ ...withDetail(sample('aws-health-event'), { affectedEntities: [{ entityValue: 'vol-0123456789abcdef0' }] }), resources: [] }),
      error: 'AWS Health AWS_EC2_INSTANCE_STORE_DRIVE_PERFORMANCE_DEGRADED names no EC2 instance (affectedEntities and resources hold none)',
    },
    {
      what: 'an event the intake does not take',
      event: () => ({ ...ec2(), 'detail-type': 'EBS Volume Notification' }),
      error: /^detail-type: "EBS Volume Notification" is not a health signal the intake takes/,
    },
    { what: 'not an object', event: () => 'stopped', error: 'the event is not a JSON object' },
    {
      what: 'a MemberUnhealthy naming no member',
      event: () => ({ clusterId: 'c1', target: {}, reason: 'r', source: 's', observedAt: '2025-06-01T12:00:00Z' }),
      error: /^MemberUnhealthy is invalid: target: names no member/,
    },
    {
      what: 'a MemberUnhealthy by member name without a cluster',
      event: () => ({ target: { memberName: 'etcd-0' }, reason: 'r', source: 's', observedAt: '2025-06-01T12:00:00Z' }),
      error: /clusterId: is required unless the target is an instanceId or nodeName/,
    },
    {
      what: 'a MemberUnhealthy for a cluster nobody configured',
      event: () => ({ clusterId: 'nope', target: { memberName: 'etcd-0' }, reason: 'r', source: 's', observedAt: '2025-06-01T12:00:00Z' }),
      error: 'MemberUnhealthy is invalid: clusterId: cluster "nope" is not configured; add it to the cluster directory',
    },
    {
      what: 'a MemberUnhealthy whose node runs in another cluster than it says',
      event: () => withDetail(sample('member-unhealthy'), { clusterId: 'c2' }),
      error: `MemberUnhealthy conflicts: nodeName ${NODE} runs member etcd-0 of cluster c1, not of c2`,
    },
    {
      what: 'our own MemberUnhealthy, which is routed to probe-members',
      event: () => ({ ...sample('member-unhealthy'), source: 'etcd-remediator' }),
      error: /^source: MemberUnhealthy from etcd-remediator is on the bus already/,
    },
  ])('$what', async ({ event, error }) => {
    const raw = event();
    const result = await handle(raw);
    expect(reported()).toEqual([]);
    const dead = await deadLetters();
    expect(dead).toHaveLength(1);
    expect(dead[0]!.error).toEqual(typeof error === 'string' ? error : expect.stringMatching(error));
    expect(dead[0]!.payload).toBe(JSON.stringify(raw));
    expect(result.deadLetters).toHaveLength(1);
  });
});
