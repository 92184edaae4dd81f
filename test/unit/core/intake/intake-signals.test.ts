// Reading outside health signals, without I/O: the machines named, and the edge cases of each shape.
import { describe, expect, it } from 'vitest';
import { instanceIdIn, readSignal } from '../../../../functions/core/intake/intake-signals.ts';

const health = (detail: Record<string, unknown>, resources: string[] = []) => ({
  'detail-type': 'AWS Health Event',
  source: 'aws.health',
  time: '2025-06-01T12:00:00Z',
  resources,
  detail: { eventTypeCode: 'AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED', ...detail },
});

const alarm = (metrics: unknown[]) => ({
  'detail-type': 'CloudWatch Alarm State Change',
  source: 'aws.cloudwatch',
  time: '2025-06-01T12:00:00Z',
  detail: { alarmName: 'a', state: { value: 'ALARM' }, configuration: { metrics } },
});
const statusCheck = (name: string, dimensions: Record<string, string>, namespace = 'AWS/EC2') => ({ metricStat: { metric: { namespace, name, dimensions } } });

describe('instanceIdIn', () => {
  it.each([
    ['i-0a1b2c3d4e5f60718', 'i-0a1b2c3d4e5f60718'],
    ['i-abcd1111', 'i-abcd1111'],
    ['arn:aws:ec2:eu-west-1:123456789012:instance/i-0a1b2c3d4e5f60718', 'i-0a1b2c3d4e5f60718'],
    ['arn:aws-cn:ec2:cn-north-1:123456789012:instance/i-0a1b2c3d4e5f60718', 'i-0a1b2c3d4e5f60718'],
    ['arn:aws:ec2:eu-west-1:123456789012:volume/vol-0a1b2c3d4e5f60718', undefined],
    ['vol-0a1b2c3d4e5f60718', undefined],
    ['AWS_ACCOUNT', undefined],
  ])('%s → %s', (value, id) => expect(instanceIdIn(value)).toBe(id));
});

describe('readSignal', () => {
  it('a Health event naming instances only in resources, as ARNs and ids, once each', () => {
    const reading = readSignal(health({}, ['arn:aws:ec2:eu-west-1:1:instance/i-0a1b2c3d4e5f60718', 'i-0a1b2c3d4e5f60718', 'i-0fedcba9876543210']));
    expect(reading.kind === 'reports' && reading.reports.map((r) => r.value)).toEqual(['i-0a1b2c3d4e5f60718', 'i-0fedcba9876543210']);
  });

  it('an alarm over several status-check metrics names each instance once; other namespaces do not count', () => {
    const reading = readSignal(
      alarm([
        statusCheck('StatusCheckFailed_System', { InstanceId: 'i-0a1b2c3d4e5f60718' }),
        statusCheck('StatusCheckFailed_Instance', { InstanceId: 'i-0a1b2c3d4e5f60718' }),
        statusCheck('StatusCheckFailed', { InstanceId: 'i-0fedcba9876543210' }, 'Custom/Thing'),
        { id: 'e1', expression: 'MAX(METRICS())' },
      ]),
    );
    expect(reading.kind === 'reports' && reading.reports.map((r) => [r.value, r.observedAt])).toEqual([['i-0a1b2c3d4e5f60718', '2025-06-01T12:00:00.000Z']]);
  });

  it('a composite alarm (no metrics) is not about a status check', () => {
    const { configuration: _, ...detail } = alarm([]).detail;
    expect(readSignal({ ...alarm([]), detail }).kind).toBe('ignored');
  });

  it('a long reason is cut to what MemberUnhealthy takes', () => {
    const reading = readSignal(
      health({ affectedEntities: [{ entityValue: 'i-0a1b2c3d4e5f60718' }], eventDescription: [{ latestDescription: 'x'.repeat(5_000) }] }),
    );
    expect(reading.kind === 'reports' && reading.reports[0]!.reason.length).toBe(1_000);
  });

  it('a bare object is a MemberUnhealthy invoked directly; an EventBridge one carries it in detail', () => {
    expect(readSignal({ clusterId: 'c' })).toEqual({ kind: 'direct', signal: 'MemberUnhealthy', detail: { clusterId: 'c' } });
    expect(readSignal({ 'detail-type': 'MemberUnhealthy', detail: { clusterId: 'c' } })).toEqual({
      kind: 'direct',
      signal: 'MemberUnhealthy',
      detail: { clusterId: 'c' },
    });
  });
});
