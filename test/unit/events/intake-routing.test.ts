// The intake's rule patterns, read by an EventBridge matcher: each committed sample reaches the
// intake, and signals it would only ignore do not (they would cost an invocation for nothing).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { intakePatterns } from '../../../events/intake-routing.ts';
import { compilePattern } from '../../support/fakes/event-pattern.ts';

const dir = new URL('../../../events/samples/intake/', import.meta.url);
const samples = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => [f, JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Record<string, unknown> & { detail: Record<string, unknown> }] as const);
const matchers = intakePatterns.map((p, i) => compilePattern(p.pattern, `intake pattern ${i}`));
const routed = (event: unknown) => matchers.filter((m) => m(event)).length;

describe('intake routing', () => {
  it.each(samples)('%s reaches the intake by exactly one rule', (_, event) => expect(routed(event)).toBe(1));

  it('every intake source has a sample', () => expect(samples.length).toBe(intakePatterns.length));

  it.each([
    [
      'an instance starting',
      (e: Record<string, unknown>) => ({ ...e, detail: { 'instance-id': 'i-0a1b2c3d4e5f60718', state: 'running' } }),
      'ec2-instance-state-change.json',
    ],
    [
      'an alarm back to OK',
      (e: Record<string, unknown> & { detail: Record<string, unknown> }) => ({ ...e, detail: { ...e.detail, state: { value: 'OK' } } }),
      'cloudwatch-alarm-status-check.json',
    ],
    [
      'an alarm on another metric',
      (e: Record<string, unknown> & { detail: Record<string, unknown> }) => ({
        ...e,
        detail: { ...e.detail, configuration: { metrics: [{ metricStat: { metric: { namespace: 'AWS/EC2', name: 'CPUUtilization', dimensions: {} } } }] } },
      }),
      'cloudwatch-alarm-status-check.json',
    ],
    ['our own MemberUnhealthy', (e: Record<string, unknown>) => ({ ...e, source: 'etcd-remediator' }), 'member-unhealthy.json'],
  ] as const)('%s does not', (_, change, file) => {
    const event = samples.find(([f]) => f === file)![1];
    expect(routed(change(event))).toBe(0);
  });
});
