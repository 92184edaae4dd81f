// Least privilege, as a table: every statement of every role the stack makes (the six functions',
// the scheduler's, the pipe's), each with its actions, resources and condition, written out here by
// hand. A grant the table does not hold fails, and so does one it holds that the stack lacks. And
// every role's trust: its service only, for this account and this very function, group or pipe.
import { testApp } from './test-app.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { hygieneRecordKey } from '../../functions/adapters/aws/dynamodb-keys.ts';
import { stackFunctionNames } from '../../infra/cdk/function-specs.ts';
import { EtcdRemediatorStack } from '../../infra/cdk/stack.ts';
import { functionsByName, policyStatements, refOf, requireRef, resource, resourcesOf, single, type CfnTemplate, type Statement } from './synth.ts';

let json: CfnTemplate;
beforeAll(() => {
  // Bundling is stack.test.ts's: the policies do not depend on it.
  const app = testApp({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const stack = new EtcdRemediatorStack(app, 'EtcdRemediator');
  json = app.synth().getStackArtifact(stack.artifactId).template as CfnTemplate;
});

const fn = (name: string) => functionsByName(json).get(name)!;
const env = (name: string) => fn(name).props.Environment.Variables;
const roleOfFunction = (name: string) => requireRef(fn(name).props.Role);
const schedulerRole = () => requireRef(env('schedule-retry').SCHEDULER_ROLE_ARN);
const pipe = () => single(json, 'AWS::Pipes::Pipe');
const pipeRole = () => requireRef(pipe()[1].Properties.RoleArn);
const groupName = () => single(json, 'AWS::Scheduler::ScheduleGroup')[1].Properties.Name as string;

/** A function's own failed-invocation queue, where it has one (intake, step-failed). */
function ownQueueOf(name: string): string | undefined {
  const config = resourcesOf(json, 'AWS::Lambda::EventInvokeConfig').find(([, r]) => refOf(r.Properties.FunctionName) === fn(name).id);
  if (!config) return undefined;
  const destination = (config[1].Properties as { DestinationConfig: { OnFailure: { Destination: unknown } } }).DestinationConfig.OnFailure.Destination;
  const id = refOf(destination);
  return id && resource(json, id).Type === 'AWS::SQS::Queue' ? id : undefined;
}

/** Logical ids by what a reader calls them, so the table reads as words. */
function namesOfIds(): Map<string, string> {
  const names = new Map<string, string>([
    [single(json, 'AWS::DynamoDB::Table')[0], 'table'],
    [single(json, 'AWS::Events::EventBus')[0], 'bus'],
    [requireRef(env('schedule-retry').SHORT_WAIT_QUEUE_URL), 'short-wait queue'],
    [requireRef(env('schedule-retry').SCHEDULER_DLQ_ARN), 'scheduler DLQ'],
    [schedulerRole(), 'scheduler role'],
    [fn('step-failed').id, 'step-failed'],
    [requireRef(env('remediate').SNAPSHOT_BUCKET), 'snapshot bucket'],
  ]);
  const pipeDlq = (resource(json, requireRef(env('schedule-retry').SHORT_WAIT_QUEUE_URL)).Properties.RedrivePolicy as { deadLetterTargetArn: unknown })
    .deadLetterTargetArn;
  names.set(requireRef(pipeDlq), 'short-wait DLQ');
  for (const name of stackFunctionNames) {
    names.set(requireRef(fn(name).props.LoggingConfig?.LogGroup), 'own log group');
    const own = ownQueueOf(name);
    if (own) names.set(own, 'own failed-invocations queue');
  }
  return names;
}

/** A value of the template in words: references by name, pseudo parameters as ACCOUNT and REGION. */
function words(value: unknown, names: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => words(v, names));
  if (typeof value !== 'object' || value === null) return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join) return join[1].map((part) => (typeof part === 'string' ? part : String(words(part, names)))).join(join[0]);
  const id = refOf(value);
  if (id) {
    const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': 'REGION', 'AWS::AccountId': 'ACCOUNT' };
    return pseudo[id] ?? names.get(id) ?? `?${id}`;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, words(v, names)]));
}

interface Grant {
  actions: string[];
  resources: unknown[];
  condition?: unknown;
}

function grantsOf(roleId: string): Grant[] {
  const names = namesOfIds();
  return policyStatements(json)
    .filter(({ roles }) => roles.includes(roleId))
    .map(({ statement }): Grant => {
      expect(statement.Effect).toBe('Allow');
      const actions = (Array.isArray(statement.Action) ? statement.Action : [statement.Action]).sort();
      const resources = (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]).map((r) => words(r, names));
      return { actions, resources, ...(statement.Condition ? { condition: words(statement.Condition, names) } : {}) };
    });
}

const sorted = (grants: Grant[]) => [...grants].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

// ---- The table. ----

const TABLE_AND_INDEXES = ['table', 'table/index/byState', 'table/index/byCluster'];
const LOGS: Grant = { actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: ['own log group'] };
const OWN_QUEUE: Grant = { actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'], resources: ['own failed-invocations queue'] };
const SECRETS: Grant = { actions: ['secretsmanager:GetSecretValue'], resources: ['arn:aws:secretsmanager:REGION:ACCOUNT:secret:etcd-remediator/*'] };
/** A pipeline function carries out any step's outbox, so it may publish every outcome a step says: never a report, never a RetryDue. */
const PIPELINE_PUBLISHES = [
  'MembersProbed',
  'RemediationBlocked',
  'RemediationClosed',
  'RemediationReplaced',
  'ReplacementOverdue',
  'LearnerRemoved',
  'LearnerCheckDue',
  // Leader hygiene: probe-members' round and check (each cluster's check, a move asked for, an alert), move-leader's end of a move.
  'HygieneCheckDue',
  'LeaderDegraded',
  'LeaderHygieneAlert',
  'RemediationApproved',
  'RetryRequested',
  'LeaderMoved',
  'HygieneMoveEnded',
  // Maintenance: a retry held by NOSPACE asks for it, each step asks for the next, and its end is said.
  'MaintenanceDue',
  'RemediationCompleted',
  'RemediationFailed',
  'MaintenanceEnded',
];
const putEvents = (detailTypes: string[]): Grant => ({
  actions: ['events:PutEvents'],
  resources: ['bus'],
  condition: { StringEquals: { 'events:source': 'etcd-remediator', 'events:detail-type': detailTypes.length === 1 ? detailTypes[0] : detailTypes } },
});
const PIPELINE = (): Grant[] => [
  LOGS,
  { actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'], resources: TABLE_AND_INDEXES },
  { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], resources: ['table'] },
  // Deletes only what a step ends: an incident's open pointer, a cluster lock or a removal slot it held; never a pause.
  {
    actions: ['dynamodb:DeleteItem'],
    resources: ['table'],
    condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['open#*', 'lock#*', 'fleet#slots*'] } },
  },
  putEvents(PIPELINE_PUBLISHES),
  { actions: ['scheduler:CreateSchedule', 'scheduler:DeleteSchedule'], resources: [`arn:aws:scheduler:REGION:ACCOUNT:schedule/${groupName()}/*`] },
  { actions: ['iam:PassRole'], resources: ['scheduler role'], condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } } },
  { actions: ['sqs:SendMessage'], resources: ['short-wait queue'] },
  SECRETS,
];
const STEP_FAILED_INVOKE: Grant = { actions: ['lambda:InvokeFunction'], resources: ['step-failed'] };
/** The snapshot before a removal: written under its prefix (a multipart upload, or its abort), never read, listed or deleted. */
const SNAPSHOT_WRITES: Grant = { actions: ['s3:AbortMultipartUpload', 's3:PutObject'], resources: ['snapshot bucket/snapshots/*'] };

const expected = (): Record<string, { role: () => string; grants: () => Grant[] }> => ({
  'probe-members': { role: () => roleOfFunction('probe-members'), grants: () => [...PIPELINE(), STEP_FAILED_INVOKE] },
  'move-leader': { role: () => roleOfFunction('move-leader'), grants: () => [...PIPELINE(), STEP_FAILED_INVOKE] },
  'schedule-retry': { role: () => roleOfFunction('schedule-retry'), grants: () => [...PIPELINE(), STEP_FAILED_INVOKE] },
  remediate: { role: () => roleOfFunction('remediate'), grants: () => [...PIPELINE(), STEP_FAILED_INVOKE, SNAPSHOT_WRITES] },
  'step-failed': { role: () => roleOfFunction('step-failed'), grants: () => [...PIPELINE(), OWN_QUEUE] },
  intake: {
    role: () => roleOfFunction('intake'),
    grants: () => [
      LOGS,
      OWN_QUEUE,
      // Which cluster and member a machine is, and whether a cluster is registered: those attributes only, no secret ARN.
      {
        actions: ['dynamodb:GetItem'],
        resources: ['table'],
        condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['instance#*', 'node#*', 'cluster#*'] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'clusterId', 'memberName'] },
          StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      },
      // A refused signal's dead letter and the counter that orders them.
      {
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: ['table'],
        condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['deadletters', 'counter#deadletters'] } },
      },
      putEvents(['MemberUnhealthy']),
    ],
  },
  scheduler: {
    role: schedulerRole,
    grants: () => [putEvents(['RetryDue']), { actions: ['sqs:SendMessage'], resources: ['scheduler DLQ'] }],
  },
  pipe: {
    role: pipeRole,
    grants: () => [
      { actions: ['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'], resources: ['short-wait queue'] },
      putEvents(['RetryDue']),
    ],
  },
});

describe('every role may do exactly what the table says', () => {
  it.each(Object.keys(expected()))('%s', (name) => {
    const row = expected()[name]!;
    expect(sorted(grantsOf(row.role()))).toEqual(sorted(row.grants()));
    expect(resource(json, row.role()).Properties.ManagedPolicyArns, name).toBeUndefined();
  });

  it('the table holds every role the stack makes', () => {
    const inTable = new Set(Object.values(expected()).map((row) => row.role()));
    expect(
      resourcesOf(json, 'AWS::IAM::Role')
        .map(([id]) => id)
        .filter((id) => !inTable.has(id)),
    ).toEqual([]);
  });

  it('only remediate is told the snapshot bucket, and only remediate may write to it', () => {
    expect(stackFunctionNames.filter((name) => env(name).SNAPSHOT_BUCKET !== undefined)).toEqual(['remediate']);
    const writers = stackFunctionNames.filter((name) => grantsOf(roleOfFunction(name)).some((g) => g.actions.some((a) => a.startsWith('s3:'))));
    expect(writers).toEqual(['remediate']);
  });

  it.each(['probe-members', 'move-leader'])("%s may read and put a cluster's hygiene record (hygiene#<clusterId>), and never delete it", (name) => {
    const grants = grantsOf(roleOfFunction(name));
    const unconditioned = (action: string) => grants.some((g) => g.actions.includes(action) && g.resources.includes('table') && g.condition === undefined);
    expect(unconditioned('dynamodb:GetItem')).toBe(true);
    expect(unconditioned('dynamodb:PutItem')).toBe(true);
    const deletable = grants
      .filter((g) => g.actions.includes('dynamodb:DeleteItem'))
      .flatMap((g) => (g.condition as { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': string[] } })['ForAllValues:StringLike']['dynamodb:LeadingKeys']);
    expect(deletable.length).toBeGreaterThan(0);
    expect(deletable.filter((prefix) => hygieneRecordKey('c1').pk.startsWith(prefix.replace(/\*$/, '')))).toEqual([]);
  });

  it('the intake reads no secret and deletes nothing', () => {
    const actions = grantsOf(roleOfFunction('intake')).flatMap((g) => g.actions);
    expect(actions.filter((a) => a.startsWith('secretsmanager:'))).toEqual([]);
    expect(actions.filter((a) => ['dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'].includes(a))).toEqual([]);
  });
});

describe('every role trusts one service, for this account (and, where the service documents it, this one resource)', () => {
  const trustOf = (roleId: string) => {
    const statements = (resource(json, roleId).Properties.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement;
    expect(statements).toHaveLength(1);
    const [statement] = statements as [Statement];
    return { principal: statement.Principal, action: statement.Action, condition: words(statement.Condition, namesOfIds()) };
  };

  // Lambda's documentation gives aws:SourceAccount for an execution role's trust; aws:SourceArn only
  // where a deployment asks for it (a key Lambda might not send would fail every function's creation).
  it.each(stackFunctionNames)('%s: lambda.amazonaws.com, for this account', (name) => {
    expect(trustOf(roleOfFunction(name))).toEqual({
      principal: { Service: 'lambda.amazonaws.com' },
      action: 'sts:AssumeRole',
      condition: { StringEquals: { 'aws:SourceAccount': 'ACCOUNT' } },
    });
  });

  let pinnedStack: CfnTemplate | undefined;
  const pinnedJson = (): CfnTemplate => {
    if (pinnedStack) return pinnedStack;
    const app = testApp({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
    const stack = new EtcdRemediatorStack(app, 'EtcdRemediator', { remediation: { executionRoleSourceArn: true } });
    return (pinnedStack = app.synth().getStackArtifact(stack.artifactId).template as CfnTemplate);
  };

  it.each(stackFunctionNames)('%s with executionRoleSourceArn: acting as this function too', (name) => {
    const pinned = pinnedJson();
    const own = functionsByName(pinned).get(name)!;
    const functionName = own.props.FunctionName;
    expect(typeof functionName, 'a name fixed at synth, so the trust can name the function without a cycle').toBe('string');
    const [statement] = (resource(pinned, requireRef(own.props.Role)).Properties.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement as [
      Statement,
    ];
    expect(words(statement.Condition, namesOfIds())).toEqual({
      StringEquals: { 'aws:SourceAccount': 'ACCOUNT', 'aws:SourceArn': `arn:aws:lambda:REGION:ACCOUNT:function:${String(functionName)}` },
    });
  });

  it('the scheduler role: scheduler.amazonaws.com, for this schedule group', () => {
    expect(trustOf(schedulerRole())).toEqual({
      principal: { Service: 'scheduler.amazonaws.com' },
      action: 'sts:AssumeRole',
      condition: { StringEquals: { 'aws:SourceAccount': 'ACCOUNT', 'aws:SourceArn': `arn:aws:scheduler:REGION:ACCOUNT:schedule-group/${groupName()}` } },
    });
  });

  it('the pipe role: pipes.amazonaws.com, for this pipe', () => {
    const name = pipe()[1].Properties.Name;
    expect(typeof name).toBe('string');
    expect(trustOf(pipeRole())).toEqual({
      principal: { Service: 'pipes.amazonaws.com' },
      action: 'sts:AssumeRole',
      condition: { StringEquals: { 'aws:SourceAccount': 'ACCOUNT', 'aws:SourceArn': `arn:aws:pipes:REGION:ACCOUNT:pipe/${String(name)}` } },
    });
  });

  it("function and pipe names are unique to the stack and within their services' limits", () => {
    const names = stackFunctionNames.map((name) => String(fn(name).props.FunctionName));
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^EtcdRemediator[A-Za-z0-9-_]{1,50}$/);
    expect(String(pipe()[1].Properties.Name)).toMatch(/^EtcdRemediator[A-Za-z0-9-_.]{1,50}$/);
  });
});
