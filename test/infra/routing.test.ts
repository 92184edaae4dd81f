// The rules and the pipe, read from the synthesized template the way the test fakes read them:
// one rule per routing entry of the catalogue, with exactly its pattern, its function and a DLQ.
import { beforeAll, describe, expect, it } from 'vitest';
import { detailTypes, EVENT_SOURCE, routes } from '../../events/catalogue.ts';
import { intakePatterns } from '../../events/intake-routing.ts';
import { SHORT_WAIT_PIPE } from '../../functions/adapters/aws/short-wait-queue.ts';
import { HYGIENE_ROUND_INPUT, HYGIENE_ROUND_MS } from '../../functions/core/hygiene/hygiene-round.ts';
import { LEARNER_CHECK_ROUND_INPUT, LEARNER_CHECK_ROUND_MS } from '../../functions/core/learners/learner-check.ts';
import { isHygieneRound } from '../../functions/probe-members/hygiene-round.ts';
import { isMaintenanceRound } from '../../functions/probe-members/maintenance-round.ts';
import { MAINTENANCE_ROUND_INPUT, MAINTENANCE_ROUND_MS } from '../../functions/core/maintenance/index.ts';
import { isLearnerCheckRound } from '../../functions/probe-members/learner-round.ts';
import { functionsByName, refOf, requireRef, resource, resourcesOf, single, type CfnTemplate, type Synthesized, synthStack } from './synth.ts';

interface RuleTarget {
  Arn: unknown;
  DeadLetterConfig?: { Arn: unknown };
  RetryPolicy?: { MaximumRetryAttempts: number; MaximumEventAgeInSeconds: number };
}
interface RuleProps {
  EventPattern: Record<string, unknown>;
  EventBusName: unknown;
  State?: string;
  Targets: RuleTarget[];
}

const allRulesOf = (json: CfnTemplate) =>
  resourcesOf(json, 'AWS::Events::Rule').map(([id, r]) => ({ id, props: r.Properties as unknown as RuleProps & { ScheduleExpression?: string } }));
/** The rules that route events (the sweep's schedule rule matches no event). */
const rulesOf = (json: CfnTemplate) => allRulesOf(json).filter((r) => r.props.ScheduleExpression === undefined);

/** Exact-value matching only: every leaf is an array of strings, nested objects are plain. */
function usesOnlyExactValues(pattern: unknown): boolean {
  if (Array.isArray(pattern)) return pattern.every((v) => typeof v === 'string');
  if (typeof pattern !== 'object' || pattern === null) return false;
  return Object.entries(pattern).every(([key, value]) => !key.startsWith('$') && usesOnlyExactValues(value));
}

let s: Synthesized;
let busId: string;
beforeAll(() => {
  // Unbundled, as in permissions.test.ts: rules, targets and the pipe do not depend on the functions' code.
  s = synthStack({}, 'EtcdRemediator', { bundling: false });
  [busId] = single(s.json, 'AWS::Events::EventBus');
});

describe('rules on our bus, generated from the catalogue', () => {
  const expected = detailTypes.flatMap((detailType) => routes[detailType].map((fn) => ({ detailType, fn })));

  it("routes leader hygiene: each cluster's check to probe-members, a degraded leader to move-leader", () => {
    expect(expected).toEqual(
      expect.arrayContaining([
        { detailType: 'HygieneCheckDue', fn: 'probe-members' },
        { detailType: 'LeaderDegraded', fn: 'move-leader' },
      ]),
    );
  });

  it('has one rule per routing entry, each with our source', () => {
    const ours = rulesOf(s.json).filter((r) => refOf(r.props.EventBusName) === busId && (r.props.EventPattern.source as string[])[0] === EVENT_SOURCE);
    expect(ours.map((r) => r.props.EventPattern['detail-type'])).toEqual(expected.map(({ detailType }) => [detailType]));
  });

  it.each(expected)('$detailType → $fn: exact pattern, its function, a DLQ and a retry policy', ({ detailType, fn }) => {
    const functions = functionsByName(s.json);
    const rule = rulesOf(s.json).find(
      (r) =>
        refOf(r.props.EventBusName) === busId &&
        (r.props.EventPattern.source as string[])[0] === EVENT_SOURCE &&
        (r.props.EventPattern['detail-type'] as string[])[0] === detailType,
    );
    expect(rule?.props.EventPattern).toEqual({ source: [EVENT_SOURCE], 'detail-type': [detailType] });
    expect(rule?.props.State ?? 'ENABLED').toBe('ENABLED');
    const targets = rule?.props.Targets ?? [];
    expect(targets).toHaveLength(1);
    const [target] = targets as [RuleTarget];
    expect(requireRef(target.Arn)).toBe(functions.get(fn)?.id);
    expect(resource(s.json, requireRef(target.DeadLetterConfig?.Arn)).Type).toBe('AWS::SQS::Queue');
    expect(target.RetryPolicy).toEqual({ MaximumRetryAttempts: expect.any(Number), MaximumEventAgeInSeconds: expect.any(Number) });
  });

  it('every rule of the template uses exact values only (what the EventBridge fake implements)', () => {
    for (const rule of rulesOf(s.json)) expect(usesOnlyExactValues(rule.props.EventPattern), rule.id).toBe(true);
  });
});

describe('intake rules, generated from events/intake-routing.ts', () => {
  it('has one rule per intake pattern, on the bus it names, with exactly its pattern, into the intake with a DLQ', () => {
    const functions = functionsByName(s.json);
    const intakeRules = rulesOf(s.json).filter((r) => r.props.Targets.some((t) => requireRef(t.Arn) === functions.get('intake')?.id));
    expect(
      intakeRules.map((r) => ({
        bus: r.props.EventBusName === 'default' ? 'default' : refOf(r.props.EventBusName) === busId ? 'remediation' : '?',
        pattern: r.props.EventPattern,
      })),
    ).toEqual(intakePatterns.map(({ bus, pattern }) => ({ bus, pattern })));
    for (const rule of intakeRules) {
      expect(rule.props.Targets).toHaveLength(1);
      const [target] = rule.props.Targets as [RuleTarget];
      expect(resource(s.json, requireRef(target.DeadLetterConfig?.Arn)).Type).toBe('AWS::SQS::Queue');
      expect(target.RetryPolicy).toBeDefined();
    }
  });

  it('once a minute, a schedule rule asks schedule-retry to sweep for stalled incidents, with a DLQ', () => {
    const functions = functionsByName(s.json);
    const schedules = allRulesOf(s.json).filter((r) => r.props.ScheduleExpression !== undefined);
    expect(schedules.map((r) => r.props.ScheduleExpression).sort()).toEqual(['rate(1 minute)', 'rate(1 minute)', 'rate(5 minutes)', 'rate(5 minutes)']);
    const sweeps = schedules.filter((r) => r.props.Targets.some((t) => requireRef(t.Arn) === functions.get('schedule-retry')?.id));
    expect(sweeps).toHaveLength(1);
    expect(sweeps[0]!.props.ScheduleExpression).toBe('rate(1 minute)');
    expect(sweeps[0]!.props.Targets).toHaveLength(1);
    expect(sweeps[0]!.props.Targets[0]).toHaveProperty('DeadLetterConfig');
  });

  it("every 5 minutes, a schedule rule hands probe-members the learner check round's fixed input, which it alone recognises, with a DLQ", () => {
    const functions = functionsByName(s.json);
    const round = allRulesOf(s.json).find((r) => r.props.Targets.some((t) => (t as { Input?: string }).Input === JSON.stringify(LEARNER_CHECK_ROUND_INPUT)))!;
    expect(round.props.ScheduleExpression).toBe('rate(5 minutes)');
    expect(round.props.Targets).toHaveLength(1);
    const [target] = round.props.Targets as [RuleTarget & { Input?: string }];
    expect(requireRef(target.Arn)).toBe(functions.get('probe-members')?.id);
    expect(JSON.parse(target.Input ?? 'null')).toEqual(LEARNER_CHECK_ROUND_INPUT);
    expect(isLearnerCheckRound(JSON.parse(target.Input!))).toBe(true);
    expect(isLearnerCheckRound({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} })).toBe(false);
    expect(
      isLearnerCheckRound({ source: 'etcd-remediator', 'detail-type': 'LearnerCheckDue', detail: { clusterId: 'c', at: '2025-06-01T12:00:00.000Z' } }),
    ).toBe(false);
    expect(resource(s.json, requireRef(target.DeadLetterConfig?.Arn)).Type).toBe('AWS::SQS::Queue');
    expect(LEARNER_CHECK_ROUND_MS).toBe(300_000);
  });

  it("every minute, a schedule rule hands probe-members the hygiene round's fixed input, which it alone recognises, with a DLQ", () => {
    const functions = functionsByName(s.json);
    const rounds = allRulesOf(s.json).filter((r) => r.props.Targets.some((t) => (t as { Input?: string }).Input === JSON.stringify(HYGIENE_ROUND_INPUT)));
    expect(rounds).toHaveLength(1);
    const [round] = rounds as [(typeof rounds)[number]];
    expect(HYGIENE_ROUND_MS).toBe(60_000);
    expect(round.props.ScheduleExpression).toBe('rate(1 minute)');
    expect(round.props.State ?? 'ENABLED').toBe('ENABLED');
    expect(round.props.Targets).toHaveLength(1);
    const [target] = round.props.Targets as [RuleTarget & { Input?: string }];
    expect(requireRef(target.Arn)).toBe(functions.get('probe-members')?.id);
    const input: unknown = JSON.parse(target.Input!);
    expect(input).toEqual(HYGIENE_ROUND_INPUT);
    // Each round is told by its own input only: neither is taken for the other, nor for an event.
    expect(isHygieneRound(input)).toBe(true);
    expect(isLearnerCheckRound(input)).toBe(false);
    expect(isHygieneRound(LEARNER_CHECK_ROUND_INPUT)).toBe(false);
    expect(isHygieneRound({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} })).toBe(false);
    expect(isHygieneRound({ source: 'etcd-remediator', 'detail-type': 'HygieneCheckDue', detail: { clusterId: 'c', at: '2025-06-01T12:00:00.000Z' } })).toBe(
      false,
    );
    expect(resource(s.json, requireRef(target.DeadLetterConfig?.Arn)).Type).toBe('AWS::SQS::Queue');
    expect(target.RetryPolicy).toEqual({ MaximumRetryAttempts: expect.any(Number), MaximumEventAgeInSeconds: expect.any(Number) });
  });

  it("every 5 minutes, a schedule rule hands probe-members the maintenance round's fixed input, which it alone recognises, with a DLQ", () => {
    const functions = functionsByName(s.json);
    const rounds = allRulesOf(s.json).filter((r) => r.props.Targets.some((t) => (t as { Input?: string }).Input === JSON.stringify(MAINTENANCE_ROUND_INPUT)));
    expect(rounds).toHaveLength(1);
    const [round] = rounds as [(typeof rounds)[number]];
    expect(MAINTENANCE_ROUND_MS).toBe(300_000);
    expect(round.props.ScheduleExpression).toBe('rate(5 minutes)');
    const [target] = round.props.Targets as [RuleTarget & { Input?: string }];
    expect(requireRef(target.Arn)).toBe(functions.get('probe-members')?.id);
    const input: unknown = JSON.parse(target.Input!);
    expect(isMaintenanceRound(input)).toBe(true);
    expect(isHygieneRound(input)).toBe(false);
    expect(isLearnerCheckRound(input)).toBe(false);
    expect(isMaintenanceRound(HYGIENE_ROUND_INPUT)).toBe(false);
    expect(resource(s.json, requireRef(target.DeadLetterConfig?.Arn)).Type).toBe('AWS::SQS::Queue');
  });

  it("our bus has exactly the catalogue's rules and the intake's, nothing else", () => {
    const onOurs = rulesOf(s.json).filter((r) => refOf(r.props.EventBusName) === busId);
    const expected = detailTypes.reduce((n, t) => n + routes[t].length, 0) + intakePatterns.filter((p) => p.bus === 'remediation').length;
    expect(onOurs).toHaveLength(expected);
    expect(rulesOf(s.json)).toHaveLength(expected + intakePatterns.filter((p) => p.bus === 'default').length);
  });
});

describe('the short-wait pipe', () => {
  interface PipeProps {
    Source: unknown;
    Target: unknown;
    RoleArn: unknown;
    SourceParameters: { SqsQueueParameters: { BatchSize: number } };
    TargetParameters: { InputTemplate: string; EventBridgeEventBusParameters: { DetailType: string; Source: string } };
  }

  it("carries the short-wait queue onto our bus as RetryDue, the detail being the body's detail", () => {
    const pipes = resourcesOf(s.json, 'AWS::Pipes::Pipe');
    expect(pipes).toHaveLength(1);
    const pipe = single(s.json, 'AWS::Pipes::Pipe')[1].Properties as unknown as PipeProps;
    const queueUrl = functionsByName(s.json).get('schedule-retry')?.props.Environment.Variables.SHORT_WAIT_QUEUE_URL;
    expect(requireRef(pipe.Source)).toBe(requireRef(queueUrl));
    expect(requireRef(pipe.Target)).toBe(busId);
    expect(pipe.SourceParameters.SqsQueueParameters.BatchSize).toBe(1);
    expect(pipe.TargetParameters).toEqual({
      InputTemplate:
        '{"incidentId": "<$.body.detail.incidentId>", "clusterId": "<$.body.detail.clusterId>", "attempt": <$.body.detail.attempt>, "at": "<$.body.detail.at>", "reason": "<$.body.detail.reason>"}',
      EventBridgeEventBusParameters: { DetailType: 'RetryDue', Source: EVENT_SOURCE },
    });
    // The adapter writes the body this template reads.
    expect(pipe.TargetParameters.InputTemplate).toBe(SHORT_WAIT_PIPE.inputTemplate);
    expect(pipe.TargetParameters.EventBridgeEventBusParameters).toEqual({ DetailType: SHORT_WAIT_PIPE.detailType, Source: SHORT_WAIT_PIPE.source });
  });

  it('has a role that may only read that queue and put events on our bus, assumed by Pipes only', () => {
    const pipe = single(s.json, 'AWS::Pipes::Pipe')[1].Properties as unknown as PipeProps;
    const roleId = requireRef(pipe.RoleArn);
    const trust = resource(s.json, roleId).Properties.AssumeRolePolicyDocument as { Statement: { Principal: unknown; Condition: unknown }[] };
    expect(trust.Statement).toEqual([
      expect.objectContaining({
        Principal: { Service: 'pipes.amazonaws.com' },
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' }, 'aws:SourceArn': expect.objectContaining({ 'Fn::Join': expect.anything() }) },
        },
      }),
    ]);
    expect(JSON.stringify(trust.Statement)).toContain(`:pipe/${String((pipe as unknown as { Name: unknown }).Name)}"`);
    const policies = resourcesOf(s.json, 'AWS::IAM::Policy').filter(([, p]) => (p.Properties.Roles as unknown[]).some((r) => requireRef(r) === roleId));
    const statements = policies.flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: unknown[] }).Statement);
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
        Resource: { 'Fn::GetAtt': [requireRef(pipe.Source), 'Arn'] },
      },
      {
        Effect: 'Allow',
        Action: 'events:PutEvents',
        Resource: { 'Fn::GetAtt': [busId, 'Arn'] },
        Condition: { StringEquals: { 'events:source': SHORT_WAIT_PIPE.source, 'events:detail-type': SHORT_WAIT_PIPE.detailType } },
      },
    ]);
  });

  it('the short-wait queue redrives to a DLQ', () => {
    const pipe = single(s.json, 'AWS::Pipes::Pipe')[1].Properties as unknown as PipeProps;
    const queue = resource(s.json, requireRef(pipe.Source)).Properties as { RedrivePolicy?: { deadLetterTargetArn: unknown; maxReceiveCount: number } };
    expect(resource(s.json, requireRef(queue.RedrivePolicy?.deadLetterTargetArn)).Type).toBe('AWS::SQS::Queue');
    expect(queue.RedrivePolicy?.maxReceiveCount).toBeGreaterThan(1);
  });

  it('a short wait the pipe failed to deliver comes back within seconds, and is tried for about a minute before the DLQ', () => {
    const pipe = single(s.json, 'AWS::Pipes::Pipe')[1].Properties as unknown as PipeProps;
    const queue = resource(s.json, requireRef(pipe.Source)).Properties as { VisibilityTimeout?: number; RedrivePolicy?: { maxReceiveCount: number } };
    // Unset, SQS's 30 s would make a failed sub-second wait half a minute late.
    expect(queue.VisibilityTimeout).toBeLessThanOrEqual(10);
    expect(queue.VisibilityTimeout! * queue.RedrivePolicy!.maxReceiveCount).toBeGreaterThanOrEqual(60);
  });
});
