// The flags of `register` that fold into parts of the registration: the repeatable NAME=VALUE
// flags (--member NAME=INSTANCE_ID, --node NAME=NODE_NAME, --alias OTHER=NAME, --metrics-url
// NAME=URL) into its members, aliases and metrics URLs, and the kube flags into its kubeconfig
// secrets, Cluster API management cluster and the exec relay's paths inside the etcd pods.
import type { ClusterRegistration } from '../../functions/adapters/aws/cluster-registration.ts';
import { UsageError } from './args.ts';
import { relayFromFlags } from './cluster-flags.ts';

type Member = NonNullable<ClusterRegistration['members']>[number];

/** `a=b` pairs of one flag, in order; a usage error naming the flag for anything else. */
export function pairsFromFlag(flag: string, shape: string, values: readonly string[]): [string, string][] {
  return values.map((value) => {
    const eq = value.indexOf('=');
    const [left, right] = [value.slice(0, eq).trim(), value.slice(eq + 1).trim()];
    if (eq <= 0 || !left || !right) throw new UsageError(`--${flag}: ${JSON.stringify(value)} is not ${shape}`);
    return [left, right];
  });
}

/** One entry per member named, with its instance and node; the same member given twice for one is refused. */
export function membersFromFlags(memberFlags: readonly string[], nodeFlags: readonly string[]): Member[] {
  const byName = new Map<string, Member>();
  const add = (flag: string, field: 'instanceId' | 'nodeName', [memberName, value]: [string, string]) => {
    const member = byName.get(memberName) ?? { memberName };
    if (member[field] !== undefined) throw new UsageError(`--${flag}: member ${memberName} is given twice (${member[field]} and ${value})`);
    member[field] = value;
    byName.set(memberName, member);
  };
  for (const pair of pairsFromFlag('member', 'NAME=INSTANCE_ID', memberFlags)) add('member', 'instanceId', pair);
  for (const pair of pairsFromFlag('node', 'NAME=NODE_NAME', nodeFlags)) add('node', 'nodeName', pair);
  return [...byName.values()];
}

/** --metrics-url NAME=URL pairs as the registration's map (the URL checked with it); a member given twice is refused. */
export function metricsUrlsFromFlags(flags: readonly string[]): Record<string, string> | undefined {
  if (flags.length === 0) return undefined;
  const byMember = new Map<string, string>();
  for (const [member, url] of pairsFromFlag('metrics-url', 'NAME=URL', flags)) {
    // The URLs are not quoted: one may carry credentials, refused once the map is checked.
    if (byMember.has(member)) throw new UsageError(`--metrics-url: member ${member} is given twice`);
    byMember.set(member, url);
  }
  return Object.fromEntries(byMember);
}

export interface KubeFlags {
  'workload-kubeconfig-secret'?: string;
  'etcd-namespace'?: string;
  'management-kubeconfig-secret'?: string;
  'capi-namespace'?: string;
  'capi-cluster'?: string;
  'machine-api-version'?: string;
  'relay-binary'?: string;
  'relay-cacert'?: string;
  'relay-cert'?: string;
  'relay-key'?: string;
}

type KubeRegistration = Pick<ClusterRegistration, 'workloadKubeconfigSecretArn' | 'etcdNamespace' | 'management' | 'relayBinary' | 'relayTls'>;

const MANAGEMENT_FLAGS = ['capi-namespace', 'capi-cluster', 'machine-api-version'] as const;

/**
 * The registration's kube fields. The Cluster API flags go together: a management kubeconfig with
 * no Cluster named, or a Cluster named with no kubeconfig, is refused naming what is missing. The
 * namespace has no default: Machines looked up in the wrong one are not found, and a Machine not
 * found counts as already replaced.
 */
export function kubeFromFlags(values: KubeFlags): KubeRegistration {
  // The path order is the stack's to complete (its policy defaults), so it is not asked for here.
  const relay = relayFromFlags(values, undefined);
  const kube: KubeRegistration = {};
  if (values['workload-kubeconfig-secret'] !== undefined) kube.workloadKubeconfigSecretArn = values['workload-kubeconfig-secret'];
  if (values['etcd-namespace'] !== undefined) kube.etcdNamespace = values['etcd-namespace'];
  const kubeconfigSecretArn = values['management-kubeconfig-secret'];
  if (kubeconfigSecretArn === undefined) {
    const stray = MANAGEMENT_FLAGS.find((flag) => values[flag] !== undefined);
    if (stray) throw new UsageError(`--${stray}: needs --management-kubeconfig-secret, the Cluster API management cluster's kubeconfig`);
    return { ...kube, ...relay };
  }
  const missing = (['capi-namespace', 'capi-cluster'] as const).filter((flag) => values[flag] === undefined);
  if (missing.length > 0) {
    throw new UsageError(
      `--management-kubeconfig-secret: needs ${missing.map((flag) => `--${flag}`).join(' and ')}: where the cluster's Machines are in the management cluster`,
    );
  }
  const version = values['machine-api-version'];
  kube.management = {
    kubeconfigSecretArn,
    namespace: values['capi-namespace']!,
    clusterName: values['capi-cluster']!,
    ...(version === undefined ? {} : { machineApiVersion: version as NonNullable<ClusterRegistration['management']>['machineApiVersion'] }),
  };
  return { ...kube, ...relay };
}
