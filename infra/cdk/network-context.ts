// Where the deployed functions run, from CDK context (`-c vpcId=… -c subnetIds=…,… -c
// securityGroupId=…`): checked as plain data first, so a typo is one line naming the key, then
// turned into the construct's vpc, vpcSubnets and securityGroups.
import { Annotations, Fn, Token, type Stack } from 'aws-cdk-lib';
import { SecurityGroup, Subnet, Vpc } from 'aws-cdk-lib/aws-ec2';
import type { EtcdRemediationProps } from './props.ts';

/** The context keys this file reads. */
export const NETWORK_CONTEXT_KEYS = ['vpcId', 'subnetIds', 'securityGroupId'] as const;
type NetworkContextKey = (typeof NETWORK_CONTEXT_KEYS)[number];

export interface NetworkContext {
  readonly vpcId: string;
  /** Imported as they are, no lookup; without them the VPC is looked up and its private subnets taken. */
  readonly subnetIds?: readonly string[];
  /** Without it, each function gets a security group of its own. */
  readonly securityGroupId?: string;
}

export type NetworkProps = Pick<EtcdRemediationProps, 'vpc' | 'vpcSubnets' | 'securityGroups'>;

export class ContextError extends Error {
  readonly key: string;
  readonly problem: string;

  constructor(key: string, problem: string) {
    super(`context ${key}: ${problem}`);
    this.name = 'ContextError';
    this.key = key;
    this.problem = problem;
  }
}

/** EC2 ids: the prefix, a dash, then 8 (older) or 17 lowercase hex digits. */
const idShape = (prefix: string): RegExp => new RegExp(`^${prefix}-([0-9a-f]{8}|[0-9a-f]{17})$`);
const shapes = { vpcId: idShape('vpc'), subnetIds: idShape('subnet'), securityGroupId: idShape('sg') } as const;
const examples = { vpcId: 'vpc-0a1b2c3d4e5f60718', subnetIds: 'subnet-0a1b2c3d4e5f60718', securityGroupId: 'sg-0a1b2c3d4e5f60718' } as const;

function checkedId(key: NetworkContextKey, value: unknown): string {
  if (typeof value !== 'string') throw new ContextError(key, `expected a string like ${examples[key]}, got ${JSON.stringify(value)}`);
  const id = value.trim();
  if (!shapes[key].test(id))
    throw new ContextError(
      key,
      `${JSON.stringify(value)} is not ${key === 'subnetIds' ? 'a subnet' : key === 'vpcId' ? 'a VPC' : 'a security group'} id (like ${examples[key]})`,
    );
  return id;
}

/** `-c subnetIds=a,b` arrives as one string; cdk.json may hold a list. */
function checkedSubnetIds(value: unknown): string[] {
  const parts = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? (value as unknown[]) : undefined;
  if (!parts) throw new ContextError('subnetIds', `expected subnet ids separated by commas, got ${JSON.stringify(value)}`);
  if (parts.length === 0) throw new ContextError('subnetIds', 'is empty: give one subnet id or more, separated by commas');
  const ids = parts.map((part) => checkedId('subnetIds', part));
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated) throw new ContextError('subnetIds', `${repeated} is given twice`);
  return ids;
}

/** The network the context asks for, checked; undefined when it names none (the functions run outside any VPC). */
export function networkContextOf(read: (key: string) => unknown): NetworkContext | undefined {
  const given = (key: NetworkContextKey) => {
    const value = read(key);
    return value === undefined || value === '' ? undefined : value;
  };
  const [vpcId, subnetIds, securityGroupId] = NETWORK_CONTEXT_KEYS.map(given);
  if (vpcId === undefined) {
    if (subnetIds !== undefined) throw new ContextError('subnetIds', 'needs vpcId: give -c vpcId=vpc-… with the VPC the subnets are in');
    if (securityGroupId !== undefined) throw new ContextError('securityGroupId', 'needs vpcId: give -c vpcId=vpc-… with the VPC the group is in');
    return undefined;
  }
  return {
    vpcId: checkedId('vpcId', vpcId),
    ...(subnetIds !== undefined ? { subnetIds: checkedSubnetIds(subnetIds) } : {}),
    ...(securityGroupId !== undefined ? { securityGroupId: checkedId('securityGroupId', securityGroupId) } : {}),
  };
}

/**
 * The construct's network props in `stack`. Given subnets are imported by id, so synth needs no
 * AWS call; without them the VPC is looked up (Vpc.fromLookup), which needs the stack's account
 * and region, and the construct takes its private subnets with egress.
 */
export function networkProps(stack: Stack, network: NetworkContext): NetworkProps {
  const securityGroups = network.securityGroupId ? [SecurityGroup.fromSecurityGroupId(stack, 'EtcdClientsGroup', network.securityGroupId)] : undefined;
  const groups = securityGroups ? { securityGroups } : {};
  if (network.subnetIds) {
    // The functions' placement is the subnets themselves: the VPC's own subnet lists stay empty,
    // and its zones are the region's as CloudFormation lists them (nothing here reads them).
    const vpc = Vpc.fromVpcAttributes(stack, 'Vpc', { vpcId: network.vpcId, availabilityZones: Fn.getAzs() });
    Annotations.of(vpc).acknowledgeWarning(
      '@aws-cdk/aws-ec2:vpcAttributeIsListTokenavailabilityZones',
      'no construct here takes subnets from the VPC: the functions get the subnets given',
    );
    const subnets = network.subnetIds.map((id) => {
      const subnet = Subnet.fromSubnetId(stack, `Subnet-${id}`, id);
      // CDK warns that an imported subnet's route table is unknown; nothing here routes, so say so once, here.
      Annotations.of(subnet).acknowledgeWarning('@aws-cdk/aws-ec2:noSubnetRouteTableId', 'the functions are only placed in the subnet; no route table is read');
      return subnet;
    });
    return { vpc, vpcSubnets: { subnets }, ...groups };
  }
  if (Token.isUnresolved(stack.account) || Token.isUnresolved(stack.region)) {
    throw new ContextError(
      'vpcId',
      `looking up ${network.vpcId} needs the stack's account and region (deploy with credentials, or set CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION); or give -c subnetIds=… to use the subnets without a lookup`,
    );
  }
  return { vpc: Vpc.fromLookup(stack, 'Vpc', { vpcId: network.vpcId }), ...groups };
}
