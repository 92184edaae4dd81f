// The stack's shape: what exists, how each function is built and configured, the table, the
// scheduler's role, alarms on every DLQ, and IAM scoped to this stack's own resources.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { detailTypes, functionNames, routes } from '../../events/catalogue.ts';
import { pipelineFunctionNames, stackFunctionNames } from '../../infra/cdk/function-specs.ts';
import { filesLoadedWith } from '../../infra/build/bundle-graph.ts';
import { intakePatterns } from '../../events/intake-routing.ts';
import { table as tableDefinition } from '../../functions/adapters/aws/dynamodb-table.ts';
import { SECRET_PREFIX } from '../../infra/cli/register.ts';
import { metricRow, metricTable } from '../../functions/core/incident/metric-names.ts';
import {
  actionsOf,
  assetDirOf,
  functionsByName,
  policyStatements,
  refOf,
  requireRef,
  resource,
  resourcesOf,
  resourcesOfStatement,
  single,
  type Statement,
  type SynthesizedFiles,
} from './synth.ts';
import { SHARED_SYNTH_TIMEOUT_MS, sharedStack } from './shared-synth.ts';

const FUNCTIONS = stackFunctionNames;
const ROUTING_ENTRIES = detailTypes.reduce((n, t) => n + routes[t].length, 0);
const INTAKE_RULES = intakePatterns.length;

// The bundled stack, shared with the other files of the run that read it.
let s: SynthesizedFiles;
beforeAll(async () => {
  s = await sharedStack();
}, SHARED_SYNTH_TIMEOUT_MS);

const count = (type: string) => resourcesOf(s.json, type).length;
const envOf = (name: string) => functionsByName(s.json).get(name)?.props.Environment.Variables ?? {};
const roleOf = (name: string) => requireRef(functionsByName(s.json).get(name)?.props.Role);

describe('resources', () => {
  it('has what the design names, in these numbers', () => {
    expect({
      bus: count('AWS::Events::EventBus'),
      rules: count('AWS::Events::Rule'),
      functions: count('AWS::Lambda::Function'),
      asyncConfigs: count('AWS::Lambda::EventInvokeConfig'),
      logGroups: count('AWS::Logs::LogGroup'),
      table: count('AWS::DynamoDB::Table'),
      scheduleGroup: count('AWS::Scheduler::ScheduleGroup'),
      pipe: count('AWS::Pipes::Pipe'),
      // Per rule target: undelivered events; the intake's and step-failed's failed invocations; the scheduler's DLQ; the short-wait queue and its DLQ.
      queues: count('AWS::SQS::Queue'),
      alarms: count('AWS::CloudWatch::Alarm'),
      dashboard: count('AWS::CloudWatch::Dashboard'),
      // One per function, the scheduler's, the pipe's.
      roles: count('AWS::IAM::Role'),
    }).toEqual({
      bus: 1,
      rules: ROUTING_ENTRIES + INTAKE_RULES + 4, // and the minute sweep, the learner check, hygiene and maintenance rounds, on schedules
      functions: 6,
      asyncConfigs: 6,
      logGroups: 6,
      table: 1,
      scheduleGroup: 1,
      pipe: 1,
      queues: 5 + 2 + 1 + 2,
      // A depth alarm on every queue but the short-wait one, blocked remediations, replacements overdue, and failed maintenance runs.
      alarms: 5 + 2 + 1 + 1 + 1 + 1 + 1,
      dashboard: 1,
      roles: 6 + 2,
    });
    console.info(`synth: ${s.ms} ms`);
  });
});

describe('functions', () => {
  it.each(FUNCTIONS)('%s: Node 24 on arm64, ESM bundle, its own log group and role', (name) => {
    const fn = functionsByName(s.json).get(name)?.props;
    expect(fn?.Runtime).toBe('nodejs24.x');
    expect(fn?.Architectures).toEqual(['arm64']);
    expect(fn?.Handler).toBe('index.handler');
    expect(resource(s.json, requireRef(fn?.LoggingConfig?.LogGroup)).Type).toBe('AWS::Logs::LogGroup');
    expect(resource(s.json, requireRef(fn?.Role)).Properties.ManagedPolicyArns).toBeUndefined();
  });

  it.each(FUNCTIONS)('%s: the bundle is index.mjs and the chunks it loads, beside it, with no .proto file', (name) => {
    const dir = assetDirOf(s, functionsByName(s.json).get(name)!.props);
    const loaded = filesLoadedWith(join(dir, 'index.mjs'));
    // The split build's, not NodejsFunction's own one-file run: index.mjs imports its chunks.
    expect(loaded.length).toBeGreaterThan(1);
    for (const file of loaded) expect(existsSync(file), file).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.proto') || f === 'proto')).toEqual([]);
    console.info(`bundle ${name} bytes=${loaded.reduce((sum, file) => sum + statSync(file).size, 0)}`);
  });

  it.each(FUNCTIONS)('%s: the environment contract', (name) => {
    const env = envOf(name);
    expect(Object.keys(env).sort()).toEqual(
      [
        'TABLE_NAME',
        'BUS_NAME',
        'BUS_ARN',
        'SCHEDULE_GROUP',
        'SCHEDULER_ROLE_ARN',
        'SCHEDULER_DLQ_ARN',
        'SHORT_WAIT_QUEUE_URL',
        'POWERTOOLS_SERVICE_NAME',
        'POWERTOOLS_METRICS_NAMESPACE',
        'POLICY_DEFAULTS',
        'NODE_OPTIONS',
        // Where its snapshots go: only remediate takes one.
        ...(name === 'remediate' ? ['SNAPSHOT_BUCKET'] : []),
      ].sort(),
    );
    const [busId] = single(s.json, 'AWS::Events::EventBus');
    const [tableId] = single(s.json, 'AWS::DynamoDB::Table');
    const [groupId, group] = single(s.json, 'AWS::Scheduler::ScheduleGroup');
    expect(env.POWERTOOLS_SERVICE_NAME).toBe(name);
    expect(env.POWERTOOLS_METRICS_NAMESPACE).toBe('EtcdRemediator');
    expect(env.NODE_OPTIONS).toBe('--enable-source-maps');
    expect(JSON.parse(String(env.POLICY_DEFAULTS))).toEqual({});
    expect(refOf(env.BUS_NAME)).toBe(busId);
    expect(env.BUS_ARN).toEqual({ 'Fn::GetAtt': [busId, 'Arn'] });
    expect(refOf(env.TABLE_NAME)).toBe(tableId);
    expect(env.SCHEDULE_GROUP).toBe(group.Properties.Name);
    expect(groupId).toBeTruthy();
    expect(resource(s.json, requireRef(env.SCHEDULER_ROLE_ARN)).Type).toBe('AWS::IAM::Role');
    expect(resource(s.json, requireRef(env.SCHEDULER_DLQ_ARN)).Type).toBe('AWS::SQS::Queue');
    expect(resource(s.json, requireRef(env.SHORT_WAIT_QUEUE_URL)).Type).toBe('AWS::SQS::Queue');
  });

  const onFailureOf = (name: string) => {
    const id = functionsByName(s.json).get(name)?.id;
    const configs = resourcesOf(s.json, 'AWS::Lambda::EventInvokeConfig').filter(([, r]) => refOf(r.Properties.FunctionName) === id);
    expect(configs).toHaveLength(1);
    const config = configs[0]![1].Properties as { MaximumRetryAttempts: number; DestinationConfig: { OnFailure: { Destination: unknown } } };
    expect(config.MaximumRetryAttempts).toBe(2);
    return config.DestinationConfig.OnFailure.Destination;
  };

  it.each(functionNames)('%s: async invocation retries twice, then its record goes to step-failed, which resumes or blocks the incident', (name) => {
    expect(onFailureOf(name)).toEqual({ 'Fn::GetAtt': [functionsByName(s.json).get('step-failed')?.id, 'Arn'] });
  });

  it.each(['intake', 'step-failed'])('%s: async invocation retries twice, then goes to an SQS queue of its own', (name) => {
    expect(resource(s.json, requireRef(onFailureOf(name))).Type).toBe('AWS::SQS::Queue');
  });
});

describe('the table', () => {
  it("is on demand, with point-in-time recovery, TTL, encryption and the definition's keys", () => {
    s.template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true },
      SSESpecification: { SSEEnabled: true },
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey.name, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: index.projection },
      })),
    });
    s.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });
});

describe('the scheduler role', () => {
  const schedulerRoleId = () => requireRef(envOf('schedule-retry').SCHEDULER_ROLE_ARN);

  it('trusts scheduler.amazonaws.com only, for this account and this schedule group', () => {
    const trust = resource(s.json, schedulerRoleId()).Properties.AssumeRolePolicyDocument as { Statement: Statement[] };
    const group = single(s.json, 'AWS::Scheduler::ScheduleGroup')[1].Properties.Name as string;
    expect(trust.Statement).toHaveLength(1);
    const [statement] = trust.Statement as [Statement];
    expect(statement).toMatchObject({ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { Service: 'scheduler.amazonaws.com' } });
    expect(statement.Condition?.StringEquals?.['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
    expect(JSON.stringify(statement.Condition?.StringEquals?.['aws:SourceArn'])).toContain(`:schedule-group/${group}`);
  });
  // What it may do, with every other role's statements and trust: permissions.test.ts, as a table.
});

describe('IAM', () => {
  /** The only wildcards: names made at run time, under names this stack owns. */
  const allowedWildcards: { actions: string[]; tail: RegExp }[] = [
    { actions: ['scheduler:CreateSchedule', 'scheduler:DeleteSchedule'], tail: /:schedule\/[\w.-]+\/\*$/ },
    { actions: ['secretsmanager:GetSecretValue'], tail: /:secret:etcd-remediator\/\*$/ },
    // Snapshot keys, one per cluster, incident and member, under the bucket's snapshot prefix.
    { actions: ['s3:PutObject', 's3:AbortMultipartUpload'], tail: /\[RemediationSnapshots\w+,Arn,\/snapshots\/\*$/ },
  ];

  it('no statement has a wildcard action, and a wildcard resource only where names are made at run time', () => {
    const statements = policyStatements(s.json);
    expect(statements.length).toBeGreaterThan(0);
    for (const { statement } of statements) {
      for (const action of actionsOf(statement)) expect(action, JSON.stringify(statement)).not.toContain('*');
      for (const r of resourcesOfStatement(statement)) {
        const text = JSON.stringify(r);
        if (!text.includes('*')) continue;
        const literal = typeof r === 'string' ? r : JSON.stringify(r).replace(/"|\]|\}/g, '');
        const allowed = allowedWildcards.find(({ tail }) => tail.test(literal));
        expect(allowed, `wildcard resource ${text}`).toBeDefined();
        expect(
          actionsOf(statement).every((a) => allowed!.actions.includes(a)),
          text,
        ).toBe(true);
      }
    }
  });

  // Each role's exact statements (actions, resources, conditions): permissions.test.ts.

  /** A resource as an ARN of this account and region, pseudo parameters filled in. */
  const arnIn = (resource: unknown): string => {
    const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': 'eu-west-1', 'AWS::AccountId': '123456789012' };
    const part = (p: unknown): string => (typeof p === 'string' ? p : (pseudo[refOf(p) ?? ''] ?? JSON.stringify(p)));
    const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    return join ? join[1].map(part).join(join[0]) : part(resource);
  };
  /** IAM's wildcard: `*` any run of characters, everything else as it is. */
  const matches = (pattern: string, arn: string): boolean => {
    const literal = (text: string) => text.replace(/[.*+?^$()|[\]{}\\/]/g, '\\$&');
    return new RegExp(`^${pattern.split('*').map(literal).join('.*')}$`).test(arn);
  };

  it('every pipeline function may read the secrets register names (TLS and kubeconfigs alike) through one GetSecretValue on the pattern; the intake none', () => {
    const named = (name: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${SECRET_PREFIX}${name}`;
    for (const name of pipelineFunctionNames) {
      const statements = policyStatements(s.json)
        .filter(({ roles }) => roles.includes(roleOf(name)))
        .map(({ statement }) => statement)
        .filter((statement) => actionsOf(statement).some((a) => a.startsWith('secretsmanager:')));
      expect(statements, name).toHaveLength(1);
      const [statement] = statements as [Statement];
      expect(actionsOf(statement)).toEqual(['secretsmanager:GetSecretValue']);
      const [pattern, ...more] = resourcesOfStatement(statement).map(arnIn);
      expect(more).toEqual([]);
      for (const secret of ['prod-tls-AbCdEf', 'prod-workload-kubeconfig-GhIjKl', 'mgmt-kubeconfig-MnOpQr'])
        expect(matches(pattern!, named(secret)), `${name} ${secret}`).toBe(true);
      expect(matches(pattern!, 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:kube/prod-kubeconfig-AbC')).toBe(false);
      expect(matches(pattern!, 'arn:aws:secretsmanager:eu-west-1:999999999999:secret:etcd-remediator/prod-kubeconfig-AbC')).toBe(false);
    }
  });

  it('each function reaches only this table and its indexes, this bus, this group, the scheduler role and the short-wait queue', () => {
    const [busId] = single(s.json, 'AWS::Events::EventBus');
    const [tableId] = single(s.json, 'AWS::DynamoDB::Table');
    const env = envOf('schedule-retry');
    for (const name of FUNCTIONS) {
      for (const { statement } of policyStatements(s.json).filter(({ roles }) => roles.includes(roleOf(name)))) {
        const actions = actionsOf(statement);
        const resources = resourcesOfStatement(statement);
        if (actions.some((a) => a.startsWith('dynamodb:'))) {
          // Writes name the table; reads its indexes too.
          const table = { 'Fn::GetAtt': [tableId, 'Arn'] };
          const indexes = tableDefinition.globalSecondaryIndexes.map((i) => ({ 'Fn::Join': ['', [table, `/index/${i.indexName}`]] }));
          expect([[table], [table, ...indexes]]).toContainEqual(resources);
        }
        if (actions.includes('events:PutEvents')) expect(resources).toEqual([{ 'Fn::GetAtt': [busId, 'Arn'] }]);
        if (actions.includes('iam:PassRole')) {
          expect(resources).toEqual([env.SCHEDULER_ROLE_ARN]);
          expect(statement.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
        }
        if (actions.length === 1 && actions[0] === 'sqs:SendMessage') {
          expect(resources).toEqual([{ 'Fn::GetAtt': [requireRef(env.SHORT_WAIT_QUEUE_URL), 'Arn'] }]);
        }
        // The unqualified step-failed function alone: no version, no other function.
        if (actions.includes('lambda:InvokeFunction')) expect(resources).toEqual([{ 'Fn::GetAtt': [functionsByName(s.json).get('step-failed')?.id, 'Arn'] }]);
      }
    }
  });
});

describe('dead-letter queues and alarms', () => {
  const alarms = () => resourcesOf(s.json, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);

  it('every queue but the short-wait queue is a DLQ with a depth alarm; the short-wait queue redrives to one', () => {
    const shortWait = requireRef(envOf('schedule-retry').SHORT_WAIT_QUEUE_URL);
    const alarmed = new Set(
      alarms()
        .filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible')
        .map((a) => requireRef((a.Dimensions as { Name: string; Value: unknown }[]).find((d) => d.Name === 'QueueName')?.Value)),
    );
    for (const [id, queue] of resourcesOf(s.json, 'AWS::SQS::Queue')) {
      if (id === shortWait) {
        expect(queue.Properties.RedrivePolicy).toBeDefined();
        continue;
      }
      expect(alarmed.has(id), id).toBe(true);
      expect(queue.Properties.MessageRetentionPeriod).toBe(14 * 24 * 3600);
    }
    expect(alarmed.size).toBe(count('AWS::SQS::Queue') - 1);
    for (const a of alarms().filter((x) => x.MetricName === 'ApproximateNumberOfMessagesVisible')) {
      expect(a).toMatchObject({ ComparisonOperator: 'GreaterThanThreshold', Threshold: 0, TreatMissingData: 'notBreaching' });
    }
  });

  it('every queue is encrypted and refuses plain HTTP', () => {
    for (const [id, queue] of resourcesOf(s.json, 'AWS::SQS::Queue')) expect(queue.Properties.SqsManagedSseEnabled, id).toBe(true);
    const policies = resourcesOf(s.json, 'AWS::SQS::QueuePolicy').map(([, p]) => JSON.stringify(p.Properties.PolicyDocument));
    expect(policies.filter((p) => p.includes('"aws:SecureTransport":"false"'))).toHaveLength(count('AWS::SQS::Queue'));
  });

  it('alarms on blocked remediations: RemediationBlocked of every pipeline function, by its service dimension', () => {
    const blocked = alarms().filter((a) => JSON.stringify(a.Metrics ?? []).includes('"MetricName":"RemediationBlocked"'));
    expect(blocked).toHaveLength(1);
    const metrics = (blocked[0]!.Metrics as { MetricStat?: { Metric: { Namespace: string; Dimensions: { Name: string; Value: string }[] } } }[]).flatMap((m) =>
      m.MetricStat ? [m.MetricStat.Metric] : [],
    );
    // step-failed blocks too, and the sweep's schedule-retry.
    expect(pipelineFunctionNames).toEqual([...functionNames, 'step-failed']);
    expect(metrics.map((m) => m.Namespace)).toEqual(pipelineFunctionNames.map(() => 'EtcdRemediator'));
    expect(metrics.map((m) => m.Dimensions)).toEqual(pipelineFunctionNames.map((service) => [{ Name: 'service', Value: service }]));
    expect(blocked[0]).toMatchObject({ ComparisonOperator: 'GreaterThanThreshold', Threshold: 0 });
  });

  it('a failed maintenance run alarms, on the metric remediate (which hosts maintain) writes', () => {
    const failed = alarms().filter((a) => a.MetricName === 'MaintenanceRuns');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      Namespace: 'EtcdRemediator',
      Statistic: 'Sum',
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      TreatMissingData: 'notBreaching',
    });
    expect(failed[0]!.Dimensions).toEqual(
      expect.arrayContaining([
        { Name: 'service', Value: 'remediate' },
        { Name: 'outcome', Value: 'failed' },
      ]),
    );
    expect(metricRow('MaintenanceRuns')?.dimensions).toEqual(['outcome']);
  });

  it('alarms and the dashboard read only metrics of the metric table, under the names the functions write', () => {
    const alarmed = alarms().flatMap((a) =>
      ((a.Metrics ?? []) as { MetricStat?: { Metric: { Namespace: string; MetricName: string } } }[]).flatMap((m) =>
        m.MetricStat?.Metric.Namespace === 'EtcdRemediator' ? [m.MetricStat.Metric.MetricName] : [],
      ),
    );
    // The dashboard's body is one JSON string, joined around the region: its metrics are ["EtcdRemediator", name, …].
    const body = JSON.stringify(resourcesOf(s.json, 'AWS::CloudWatch::Dashboard').map(([, d]) => d.Properties.DashboardBody));
    const graphed = [...body.matchAll(/\\"EtcdRemediator\\",\\"(\w+)\\"/g)].map((m) => m[1]!);
    expect(alarmed).toEqual(expect.arrayContaining(['RemediationBlocked', 'ReplacementOverdue']));
    expect(graphed).toEqual(expect.arrayContaining(['RemediationCompleted', 'LeaderMoved', 'TimeToRemediate']));
    const written = new Set(metricTable.filter((row) => !row.localOnly).map((row) => row.name));
    for (const name of [...alarmed, ...graphed]) expect(written, name).toContain(name);
  });
});
