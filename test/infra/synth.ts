// Synthesizes the stack and gives typed access to the template. Bundling the six functions is
// most of the time; it is printed so a slow synth shows. The bundled default stack is made once
// per run and shared by the files that read it (shared-synth.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import { testApp } from './test-app.ts';
import { Template } from 'aws-cdk-lib/assertions';
import { EtcdRemediatorStack, type EtcdRemediatorStackProps } from '../../infra/cdk/stack.ts';

export interface CfnResource {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string[];
  DeletionPolicy?: string;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
}

/** What a synth leaves on disk: enough for a test in another process to read it (shared-synth.ts). */
export interface SynthesizedFiles {
  template: Template;
  json: CfnTemplate;
  assemblyDir: string;
  /** The template file the assembly holds, which `json` was read from. */
  templateFile: string;
  ms: number;
}

export interface Synthesized extends SynthesizedFiles {
  app: App;
  stack: EtcdRemediatorStack;
}

export interface SynthOptions {
  /** Where the cloud assembly goes; a new temporary folder when unset. */
  outdir?: string;
  /** false: no function is bundled (of the template, only the functions' S3Keys differ), for tests of what bundling does not change. */
  bundling?: boolean;
}

export function synthStack(props: EtcdRemediatorStackProps = {}, id = 'EtcdRemediator', options: SynthOptions = {}): Synthesized {
  const started = performance.now();
  const app = testApp({
    // CloudFormation's own template checks run once, in nag.test.ts; here they would double the time.
    builtinCloudFormationValidation: false,
    ...(options.outdir ? { outdir: options.outdir } : {}),
    ...(options.bundling === false ? { context: { 'aws:cdk:bundling-stacks': [] } } : {}),
  });
  const stack = new EtcdRemediatorStack(app, id, props);
  const assembly = app.synth();
  const artifact = assembly.getStackArtifact(stack.artifactId);
  const json = artifact.template as CfnTemplate;
  const ms = Math.round(performance.now() - started);
  console.info(`synth ${id}: ${ms} ms`);
  return { app, stack, template: Template.fromJSON(json), json, assemblyDir: assembly.directory, templateFile: artifact.templateFullPath, ms };
}

/** [logicalId, resource] of every resource of a type. */
export const resourcesOf = (json: CfnTemplate, type: string): [string, CfnResource][] => Object.entries(json.Resources).filter(([, r]) => r.Type === type);

/** The one resource of a type, or an error. */
export function single(json: CfnTemplate, type: string): [string, CfnResource] {
  const found = resourcesOf(json, type);
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  return found[0]!;
}

export const resource = (json: CfnTemplate, logicalId: string): CfnResource => {
  const found = json.Resources[logicalId];
  if (!found) throw new Error(`no resource ${logicalId}`);
  return found;
};

/** The logical id a `Ref` or `Fn::GetAtt` points at. */
export function refOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const ref = (value as { Ref?: unknown }).Ref;
  if (typeof ref === 'string') return ref;
  const getAtt = (value as { 'Fn::GetAtt'?: unknown })['Fn::GetAtt'];
  return Array.isArray(getAtt) && typeof getAtt[0] === 'string' ? getAtt[0] : undefined;
}

export const requireRef = (value: unknown): string => {
  const id = refOf(value);
  if (!id) throw new Error(`not a reference: ${JSON.stringify(value)}`);
  return id;
};

export interface FunctionProps {
  FunctionName?: unknown;
  Runtime: string;
  Architectures: string[];
  Handler: string;
  Role: unknown;
  Timeout: number;
  MemorySize: number;
  Environment: { Variables: Record<string, unknown> };
  Code: { S3Key: unknown };
  VpcConfig?: { SubnetIds: unknown[]; SecurityGroupIds: unknown[] };
  LoggingConfig?: { LogGroup: unknown };
}

/** Function name (its POWERTOOLS_SERVICE_NAME) → logical id and properties. */
export function functionsByName(json: CfnTemplate): Map<string, { id: string; props: FunctionProps }> {
  const byName = new Map<string, { id: string; props: FunctionProps }>();
  for (const [id, r] of resourcesOf(json, 'AWS::Lambda::Function')) {
    const props = r.Properties as unknown as FunctionProps;
    byName.set(String(props.Environment.Variables.POWERTOOLS_SERVICE_NAME), { id, props });
  }
  return byName;
}

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export const actionsOf = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);
export const resourcesOfStatement = (s: Statement): unknown[] =>
  s.Resource === undefined ? [] : Array.isArray(s.Resource) ? (s.Resource as unknown[]) : [s.Resource];

/** Every identity-policy statement of the template, with the roles it is attached to. */
export function policyStatements(json: CfnTemplate): { roles: string[]; statement: Statement }[] {
  const out: { roles: string[]; statement: Statement }[] = [];
  for (const [, r] of resourcesOf(json, 'AWS::IAM::Policy')) {
    const doc = r.Properties.PolicyDocument as { Statement: Statement[] };
    const roles = (r.Properties.Roles as unknown[]).map(requireRef);
    for (const statement of doc.Statement) out.push({ roles, statement });
  }
  for (const [id, r] of resourcesOf(json, 'AWS::IAM::Role')) {
    const inline = (r.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[];
    for (const policy of inline) for (const statement of policy.PolicyDocument.Statement) out.push({ roles: [id], statement });
  }
  return out;
}

/** The asset folder a function's code was staged to. */
export function assetDirOf(s: Pick<SynthesizedFiles, 'assemblyDir'>, fn: FunctionProps): string {
  const key = fn.Code.S3Key;
  if (typeof key !== 'string') throw new Error(`unexpected S3Key ${JSON.stringify(key)}`);
  const dir = join(s.assemblyDir, `asset.${key.replace(/\.zip$/, '')}`);
  if (!existsSync(dir)) throw new Error(`no asset folder ${dir}`);
  return dir;
}
