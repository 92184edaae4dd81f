// The app's VPC from CDK context: checked as data (each refusal names its key), imported without a
// lookup when subnets are given, looked up otherwise; and the app itself, spawned as the CDK CLI
// runs it, placing every function in the VPC or refusing bad context with exit code 2.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Environment } from 'aws-cdk-lib';
import { testApp } from './test-app.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { APP_STACK_ID, appStack } from '../../infra/cdk/app-stack.ts';
import { stackFunctionNames } from '../../infra/cdk/function-specs.ts';
import { ContextError, networkContextOf } from '../../infra/cdk/network-context.ts';
import { deployContextOf } from '../../infra/cdk/deploy-context.ts';
import { functionsByName, type CfnTemplate } from './synth.ts';

const VPC = 'vpc-0a1b2c3d4e5f60718';
const SUBNETS = ['subnet-0a1b2c3d4e5f60718', 'subnet-0b1c2d3e'];
const GROUP = 'sg-0a1b2c3d4e5f60718';
const ENV = { account: '111111111111', region: 'eu-west-1' };
/** No stack is bundled: these tests are about placement, and bundling is stack.test.ts's. */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

const context = (values: Record<string, unknown>) => (key: string) => values[key];

describe('networkContextOf', () => {
  it('no vpcId, no network: the functions run outside any VPC', () => {
    expect(networkContextOf(context({}))).toBeUndefined();
    expect(networkContextOf(context({ vpcId: '' }))).toBeUndefined();
  });

  it('takes the ids as the CLI gives them (one string, commas) or as cdk.json may (a list)', () => {
    expect(networkContextOf(context({ vpcId: VPC, subnetIds: SUBNETS.join(','), securityGroupId: GROUP }))).toEqual({
      vpcId: VPC,
      subnetIds: SUBNETS,
      securityGroupId: GROUP,
    });
    expect(networkContextOf(context({ vpcId: VPC, subnetIds: [...SUBNETS] }))).toEqual({ vpcId: VPC, subnetIds: SUBNETS });
    expect(networkContextOf(context({ vpcId: ` ${VPC}`, subnetIds: SUBNETS.join(' , ') }))).toEqual({ vpcId: VPC, subnetIds: SUBNETS });
    expect(networkContextOf(context({ vpcId: VPC }))).toEqual({ vpcId: VPC });
  });

  it.each([
    [{ subnetIds: SUBNETS.join(',') }, 'context subnetIds: needs vpcId: give -c vpcId=vpc-… with the VPC the subnets are in'],
    [{ securityGroupId: GROUP }, 'context securityGroupId: needs vpcId: give -c vpcId=vpc-… with the VPC the group is in'],
    [{ vpcId: 'vpc-123' }, 'context vpcId: "vpc-123" is not a VPC id (like vpc-0a1b2c3d4e5f60718)'],
    [{ vpcId: 'subnet-0a1b2c3d4e5f60718' }, 'context vpcId: "subnet-0a1b2c3d4e5f60718" is not a VPC id (like vpc-0a1b2c3d4e5f60718)'],
    [{ vpcId: VPC, subnetIds: `${SUBNETS[0]},` }, 'context subnetIds: "" is not a subnet id (like subnet-0a1b2c3d4e5f60718)'],
    [{ vpcId: VPC, subnetIds: `${SUBNETS[0]},${SUBNETS[0]}` }, `context subnetIds: ${SUBNETS[0]} is given twice`],
    [{ vpcId: VPC, subnetIds: [] }, 'context subnetIds: is empty: give one subnet id or more, separated by commas'],
    [{ vpcId: VPC, subnetIds: 7 }, 'context subnetIds: expected subnet ids separated by commas, got 7'],
    [{ vpcId: VPC, securityGroupId: 'sg-XYZ12345' }, 'context securityGroupId: "sg-XYZ12345" is not a security group id (like sg-0a1b2c3d4e5f60718)'],
  ])('refuses %j, naming the key', (values, message) => {
    expect(() => networkContextOf(context(values))).toThrow(ContextError);
    expect(() => networkContextOf(context(values))).toThrow(message);
  });
});

/** The app's stack built from this context and synthesized, bundling skipped. */
function synthApp(values: Record<string, unknown>, env: Environment = ENV) {
  const app = testApp({ context: { ...NO_BUNDLING, ...values }, builtinCloudFormationValidation: false });
  const stack = appStack(app, env);
  const assembly = app.synth();
  const artifact = assembly.getStackArtifact(stack.artifactId);
  const warnings = artifact.messages.filter((m) => String(m.level) === 'warning').map((m) => `${m.id}: ${JSON.stringify(m.entry.data)}`);
  return { json: artifact.template as CfnTemplate, missing: assembly.manifest.missing ?? [], warnings };
}

describe('appStack', () => {
  it('with vpcId, subnetIds and securityGroupId: every function in those subnets and that group, without a lookup', () => {
    const { json, missing, warnings } = synthApp({ vpcId: VPC, subnetIds: SUBNETS.join(','), securityGroupId: GROUP, alarmEmail: 'oncall@example.com' });
    // A user's synth prints every warning: imported subnets and zones raise two that do not apply here.
    expect(warnings).toEqual([]);
    const functions = functionsByName(json);
    expect([...functions.keys()].sort()).toEqual([...stackFunctionNames].sort());
    for (const [name, fn] of functions) expect(fn.props.VpcConfig, name).toEqual({ SubnetIds: SUBNETS, SecurityGroupIds: [GROUP] });
    expect(missing).toEqual([]);
  });

  it('with vpcId and subnetIds only: a security group of its own for each function, in that VPC', () => {
    const { json } = synthApp({ vpcId: VPC, subnetIds: SUBNETS.join(',') }, {});
    const groups = Object.entries(json.Resources).filter(([, r]) => r.Type === 'AWS::EC2::SecurityGroup');
    expect(groups).toHaveLength(stackFunctionNames.length);
    for (const [, group] of groups) expect(group.Properties.VpcId).toBe(VPC);
    for (const [name, fn] of functionsByName(json)) {
      expect(fn.props.VpcConfig?.SubnetIds, name).toEqual(SUBNETS);
      expect(fn.props.VpcConfig?.SecurityGroupIds, name).toHaveLength(1);
    }
  });

  it("with only vpcId: the VPC is looked up in the stack's account and region", () => {
    const { json, missing } = synthApp({ vpcId: VPC, securityGroupId: GROUP });
    expect(missing.map((m) => [m.provider, m.props])).toEqual([
      ['vpc-provider', expect.objectContaining({ account: ENV.account, region: ENV.region, filter: { 'vpc-id': VPC } })],
    ]);
    // Until the CLI has looked it up, CDK stands a dummy VPC in; the functions are placed in its private subnets.
    for (const [name, fn] of functionsByName(json)) expect(fn.props.VpcConfig?.SecurityGroupIds, name).toEqual([GROUP]);
  });

  it('with only vpcId and no account or region: refused, saying what would do', () => {
    const app = testApp({ context: { ...NO_BUNDLING, vpcId: VPC } });
    expect(() => appStack(app, {})).toThrow(
      `context vpcId: looking up ${VPC} needs the stack's account and region (deploy with credentials, or set CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION); or give -c subnetIds=… to use the subnets without a lookup`,
    );
  });

  it('without a VPC: no function has a VpcConfig', () => {
    const { json } = synthApp({}, {});
    expect(functionsByName(json).size).toBe(stackFunctionNames.length);
    for (const [name, fn] of functionsByName(json)) expect(fn.props.VpcConfig, name).toBeUndefined();
  });
});

const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:oncall';

describe('deployContextOf', () => {
  it('takes an alarm topic, an email address and the trust flag as the CLI gives them (strings) or cdk.json may', () => {
    expect(deployContextOf(context({}))).toEqual({});
    expect(deployContextOf(context({ alarmTopicArn: ` ${TOPIC}`, alarmEmail: 'oncall@example.com', executionRoleSourceArn: 'true' }))).toEqual({
      alarmTopicArn: TOPIC,
      alarmEmail: 'oncall@example.com',
      executionRoleSourceArn: true,
    });
    expect(deployContextOf(context({ executionRoleSourceArn: false }))).toEqual({});
  });

  it.each([
    [{ alarmTopicArn: 'arn:aws:sqs:eu-west-1:111111111111:q' }, 'context alarmTopicArn: "arn:aws:sqs:eu-west-1:111111111111:q" is not an SNS topic ARN'],
    [{ alarmTopicArn: 'oncall' }, 'context alarmTopicArn: "oncall" is not an SNS topic ARN (like arn:aws:sns:eu-west-1:123456789012:oncall)'],
    [{ alarmEmail: 'Ops <ops@example.com>' }, 'context alarmEmail: "Ops <ops@example.com>" is not one email address (like oncall@example.com)'],
    [{ alarmEmail: 'a@example.com,b@example.com' }, 'context alarmEmail: "a@example.com,b@example.com" is not one email address'],
    [{ executionRoleSourceArn: 'yes' }, 'context executionRoleSourceArn: expected true or false, got "yes"'],
  ])('refuses %j, naming the key', (values, message) => {
    expect(() => deployContextOf(context(values))).toThrow(ContextError);
    expect(() => deployContextOf(context(values))).toThrow(message);
  });
});

describe("appStack: who hears the alarms, and the execution roles' trust", () => {
  const alarmsOf = (json: CfnTemplate) => Object.values(json.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');

  it('with alarmTopicArn: every alarm notifies that topic', () => {
    const { json, warnings } = synthApp({ alarmTopicArn: TOPIC }, {});
    expect(warnings).toEqual([]);
    expect(alarmsOf(json).length).toBeGreaterThan(5);
    for (const alarm of alarmsOf(json)) expect(alarm.Properties.AlarmActions).toEqual([TOPIC]);
  });

  it('with alarmEmail: a topic of the stack, that address subscribed, and every alarm notifies it', () => {
    const { json } = synthApp({ alarmEmail: 'oncall@example.com' }, {});
    const topics = Object.entries(json.Resources).filter(([, r]) => r.Type === 'AWS::SNS::Topic');
    expect(topics).toHaveLength(1);
    const [topicId] = topics[0]!;
    const subscriptions = Object.values(json.Resources).filter((r) => r.Type === 'AWS::SNS::Subscription');
    expect(subscriptions.map((r) => [r.Properties.Protocol, r.Properties.Endpoint, r.Properties.TopicArn])).toEqual([
      ['email', 'oncall@example.com', { Ref: topicId }],
    ]);
    for (const alarm of alarmsOf(json)) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
  });

  it('with neither: the alarms notify no one, and synth says so', () => {
    const { json, warnings } = synthApp({}, {});
    for (const alarm of alarmsOf(json)) expect(alarm.Properties.AlarmActions).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('the alarms notify no one: give -c alarmTopicArn=arn:aws:sns:… or -c alarmEmail=you@example.com')]);
  });

  it('aws:SourceArn in the trust only with executionRoleSourceArn', () => {
    const trust = (json: CfnTemplate, name: string) => {
      const role = json.Resources[(functionsByName(json).get(name)!.props.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0]]!;
      return JSON.stringify(role.Properties.AssumeRolePolicyDocument);
    };
    expect(trust(synthApp({}, {}).json, 'remediate')).not.toContain('aws:SourceArn');
    expect(trust(synthApp({ executionRoleSourceArn: 'true' }, {}).json, 'remediate')).toContain('aws:SourceArn');
  });
});

describe('infra/app.ts, run as the CDK CLI runs it (context in CDK_CONTEXT_JSON)', () => {
  const APP = fileURLToPath(new URL('../../infra/app.ts', import.meta.url));
  const outdir = mkdtempSync(join(tmpdir(), 'etcd-remediator-app-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  const runApp = (values: Record<string, unknown>) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      // No caller account or region, as on a machine without credentials.
      const { CDK_DEFAULT_ACCOUNT: _account, CDK_DEFAULT_REGION: _region, ...inherited } = process.env;
      const env = { ...inherited, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify({ ...NO_BUNDLING, ...values }) };
      execFile(process.execPath, [APP], { env, timeout: 120_000 }, (error, _stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr }),
      );
    });

  it('places every function in the VPC the context names', async () => {
    const run = await runApp({ vpcId: VPC, subnetIds: SUBNETS.join(','), securityGroupId: GROUP });
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(readFileSync(join(outdir, `${APP_STACK_ID}.template.json`), 'utf8')) as CfnTemplate;
    expect(functionsByName(json).size).toBe(stackFunctionNames.length);
    for (const [name, fn] of functionsByName(json)) expect(fn.props.VpcConfig, name).toEqual({ SubnetIds: SUBNETS, SecurityGroupIds: [GROUP] });
  });

  it('refuses bad context in one line naming the key, exit code 2', async () => {
    const run = await runApp({ subnetIds: SUBNETS.join(',') });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('etcd-remediator app: context subnetIds: needs vpcId: give -c vpcId=vpc-… with the VPC the subnets are in\n');
  });
});
