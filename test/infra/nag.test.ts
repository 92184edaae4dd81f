// cdk-nag's AwsSolutions pack finds nothing unacknowledged, on the default stack and on one placed
// in a VPC with every prop set; every acknowledgement carries a reason and names something that
// is really there (no stale suppressions). Also the props: VPC placement, alarm actions, policy
// defaults, removal policy, secrets pattern.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type App, CfnElement, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { testApp } from './test-app.ts';
import { Template } from 'aws-cdk-lib/assertions';
import { SecurityGroup, Vpc } from 'aws-cdk-lib/aws-ec2';
import cdkNag from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { EtcdRemediation } from '../../infra/cdk/etcd-remediation.ts';
import { pipelineFunctionNames } from '../../infra/cdk/function-specs.ts';
import { flattenCfn } from '../../infra/cdk/nag.ts';
import { EtcdRemediatorStack } from '../../infra/cdk/stack.ts';
import { functionsByName, policyStatements, refOf, resourcesOf, resourcesOfStatement, requireRef, type CfnTemplate } from './synth.ts';

const { AwsSolutionsChecks } = cdkNag;
const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:etcd-oncall';
const SECRETS = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:prod/etcd-*';

interface Acknowledged {
  path: string;
  construct: IConstruct;
  id: string;
  reason: string;
}

function acknowledgements(root: IConstruct): Acknowledged[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>))
      .map(([id, reason]) => ({ path: construct.node.path, construct, id: id.replace(/^annotation::/i, ''), reason })),
  );
}

/** The logical id of the CloudFormation resource an L2 construct stands for. */
function logicalIdOf(construct: IConstruct): string {
  const child = construct.node.defaultChild;
  if (!(child instanceof CfnElement)) throw new Error(`${construct.node.path} has no CloudFormation resource`);
  return Stack.of(child).resolve(Stack.of(child).getLogicalId(child)) as string;
}

let app: App;
let plain: EtcdRemediatorStack;
let placed: Stack;
let plainJson: CfnTemplate;
let placedJson: CfnTemplate;
let assemblyDir: string;

beforeAll(() => {
  const started = performance.now();
  // No function is bundled: cdk-nag reads the construct tree and CloudFormation's checks the
  // templates, neither the functions' code (stack.test.ts and bundling.test.ts check the bundles).
  app = testApp({ context: { 'aws:cdk:bundling-stacks': [] } });
  plain = new EtcdRemediatorStack(app, 'Plain');
  placed = new Stack(app, 'Placed', { env: { account: '111111111111', region: 'eu-west-1' } });
  const vpc = Vpc.fromVpcAttributes(placed, 'Vpc', {
    vpcId: 'vpc-0a1b2c3d4e5f60718',
    availabilityZones: ['eu-west-1a', 'eu-west-1b'],
    privateSubnetIds: ['subnet-0a1b2c3d4e5f60718', 'subnet-0a1b2c3d4e5f60719'],
  });
  const etcdClients = SecurityGroup.fromSecurityGroupId(placed, 'EtcdClients', 'sg-0a1b2c3d4e5f60718');
  new EtcdRemediation(placed, 'Remediation', {
    vpc,
    securityGroups: [etcdClients],
    alarmActions: [TOPIC],
    policyDefaults: { graceMs: 120_000, electionTimeoutMs: 500 },
    tableRemovalPolicy: RemovalPolicy.DESTROY,
    secretArnPattern: SECRETS,
  });
  const assembly = app.synth();
  assemblyDir = assembly.directory;
  plainJson = assembly.getStackArtifact(plain.artifactId).template as CfnTemplate;
  placedJson = assembly.getStackArtifact(placed.artifactId).template as CfnTemplate;
  console.info(`synth two stacks: ${Math.round(performance.now() - started)} ms`);
});

describe('cdk-nag AwsSolutions', () => {
  it.each(['Plain', 'Placed'])('%s: no unacknowledged finding', (name) => {
    const stack = name === 'Plain' ? plain : placed;
    const report = new AwsSolutionsChecks().validateScope(stack);
    const findings = report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
    expect(findings).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('every acknowledgement has a reason a reviewer can check, and names something that is there', () => {
    const acks = acknowledgements(app);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.reason.length, `${ack.path}: ${ack.id}`).toBeGreaterThan(60);
      const stack = Stack.of(ack.construct);
      const json = stack === plain ? plainJson : placedJson;
      const resolved = (value: unknown) => flattenCfn(stack.resolve(value) as Parameters<typeof flattenCfn>[0]);
      if (ack.id === 'AwsSolutions-SQS3') {
        // A queue that is some other thing's dead-letter queue, and has none itself.
        const logicalId = logicalIdOf(ack.construct);
        expect(json.Resources[logicalId]?.Properties.RedrivePolicy).toBeUndefined();
        expect(JSON.stringify(json.Resources)).toMatch(
          new RegExp(`"(DeadLetterConfig|OnFailure|RedrivePolicy)":\\{[^}]*"${logicalId}"|"SCHEDULER_DLQ_ARN":\\{"Fn::GetAtt":\\["${logicalId}"`),
        );
        continue;
      }
      if (ack.id === 'AwsSolutions-S1') {
        // The snapshot bucket, which keeps no server access logs (its reason says what stands in for them).
        const bucket = json.Resources[logicalIdOf(ack.construct)];
        expect(bucket?.Type).toBe('AWS::S3::Bucket');
        expect(bucket?.Properties.LoggingConfiguration).toBeUndefined();
        continue;
      }
      const iam5 = /^AwsSolutions-IAM5\[Resource::(.+)\]$/.exec(ack.id);
      const iam4 = /^AwsSolutions-IAM4\[Policy::(.+)\]$/.exec(ack.id);
      expect(iam5 ?? iam4, `unexpected acknowledgement ${ack.id}`).not.toBeNull();
      const roleId = logicalIdOf(ack.construct);
      if (iam5) {
        const resources = policyStatements(json)
          .filter(({ roles }) => roles.includes(roleId))
          .flatMap(({ statement }) => resourcesOfStatement(statement));
        expect(resources.map(resolved), ack.id).toContain(iam5[1]);
      } else {
        const managed = (json.Resources[roleId]?.Properties.ManagedPolicyArns ?? []) as unknown[];
        expect(managed.map(resolved), ack.id).toContain(iam4![1]);
      }
    }
    const summary = [...new Map(acks.map((a) => [a.id.replace(/<[^>]+>/g, '…'), a.reason])).entries()];
    console.info(summary.map(([id, reason]) => `acknowledged ${id}: ${reason}`).join('\n'));
  });
});

describe('CloudFormation validation built into CDK', () => {
  it("finds nothing in either template (resource schemas and CDK's default rules)", () => {
    const report = JSON.parse(readFileSync(join(assemblyDir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: { ruleName: string; description: string }[] }[];
    };
    // The report lists only plugins that found something; the check runs unless switched off.
    expect(process.env.CDK_VALIDATION).not.toBe('false');
    expect(report.pluginReports.flatMap((p) => p.violations.map((v) => `${p.pluginName}: ${v.ruleName} ${v.description}`))).toEqual([]);
  });
});

describe('props', () => {
  it('places every function in the VPC, in the given security groups', () => {
    for (const [name, fn] of functionsByName(placedJson)) {
      expect(fn.props.VpcConfig, name).toEqual({
        SubnetIds: ['subnet-0a1b2c3d4e5f60718', 'subnet-0a1b2c3d4e5f60719'],
        SecurityGroupIds: ['sg-0a1b2c3d4e5f60718'],
      });
    }
    for (const [, fn] of functionsByName(plainJson)) expect(fn.props.VpcConfig).toBeUndefined();
  });

  it('sends every alarm to the given topic', () => {
    const alarms = resourcesOf(placedJson, 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(0);
    for (const [, alarm] of alarms) expect(alarm.Properties.AlarmActions).toEqual([TOPIC]);
  });

  it('hands the policy defaults to every function, and refuses a bad policy at synth', () => {
    for (const [, fn] of functionsByName(placedJson)) {
      expect(JSON.parse(String(fn.props.Environment.Variables.POLICY_DEFAULTS))).toEqual({ graceMs: 120_000, electionTimeoutMs: 500 });
    }
    const scratch = new Stack(testApp(), 'Bad');
    expect(() => new EtcdRemediation(scratch, 'R', { policyDefaults: { electionTimeoutMs: 5 } })).toThrow(/at least 100ms/);
  });

  it('refuses subnets or security groups without a VPC', () => {
    const scratch = new Stack(testApp(), 'NoVpc');
    const sg = SecurityGroup.fromSecurityGroupId(scratch, 'Sg', 'sg-0a1b2c3d4e5f60718');
    expect(() => new EtcdRemediation(scratch, 'R', { securityGroups: [sg] })).toThrow(/need vpc/);
  });

  it('applies the table removal policy', () => {
    Template.fromJSON(placedJson).hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete' });
  });

  it('scopes secret reads to the given pattern', () => {
    const readers = policyStatements(placedJson).filter(({ statement }) => statement.Action === 'secretsmanager:GetSecretValue');
    // Every pipeline function: each step reads its cluster's entry; the intake reads none.
    expect(readers.length).toBe(pipelineFunctionNames.length);
    for (const { statement } of readers) expect(statement.Resource).toBe(SECRETS);
    const env = functionsByName(placedJson).get('probe-members')?.props.Environment.Variables;
    expect(refOf(env?.TABLE_NAME)).toBe(requireRef(env?.TABLE_NAME));
  });
});
