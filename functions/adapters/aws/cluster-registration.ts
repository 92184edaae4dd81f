// A cluster's entry in the directory: what is registered, how it is checked (the same check when
// written and when read back, so an item edited by hand fails with the cluster and field named),
// and how it is written, with the lookups the intake uses to find a machine's cluster and member.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { carriesCredentials, CREDENTIALS_IN_URL, metricsUrlsSchema, podPathProblem, type PathName } from '../../core/common/index.ts';
import { firstPolicyProblem, pathNameSchema, policySchema, type Policy, type PolicyInput } from '../../core/policy/index.ts';
import { budgetProblem } from '../../core/budget/index.ts';
import type { KubeAccessConfig, MachineApiVersion } from '../../ports/kube-access.ts';
import type { Item } from './dynamodb-codec.ts';
import { conditionally } from './dynamodb-context.ts';
import { clusterConfigKey, fleetClusterKey, instanceKey, nodeKey, type Key } from './dynamodb-keys.ts';
import { documentClient } from './dynamodb-store.ts';
import { underDefaults } from './policy-defaults.ts';

export interface ClusterRegistration {
  clusterId: string;
  /** etcd client URLs to seed the member list from. */
  endpoints: string[];
  /** Shorthand for policy.pathOrder. */
  pathOrder?: PathName[];
  /** Kept as given, so defaults that change later apply; checked with the policy's own schema. */
  policy?: PolicyInput;
  /** Node, machine or instance names to etcd member names, where they differ. */
  aliases?: Record<string, string>;
  /** Where each member serves /metrics, by member name or id, when not on its client URL (etcd's --listen-metrics-urls). */
  metricsUrls?: Record<string, string>;
  /** A Secrets Manager secret holding {"ca","cert","key"} as PEM; none for plain-HTTP etcd. */
  tlsSecretArn?: string;
  /** Each member's machine, as health signals name it: how the intake finds cluster and member. */
  members?: { memberName: string; instanceId?: string; nodeName?: string }[];
  /**
   * A Secrets Manager secret holding the workload cluster's kubeconfig (its text): the
   * port-forward and exec relay paths, and where each member runs (its Node).
   */
  workloadKubeconfigSecretArn?: string;
  /** Where kubeadm's etcd static pods run (default kube-system); only with the workload kubeconfig. */
  etcdNamespace?: string;
  /**
   * Cluster API: the management cluster holding this cluster's Machines, to read them (a
   * deleting Machine) and to replace the removed member's. Only with the workload kubeconfig.
   */
  management?: ManagementRegistration;
  /** etcdctl inside the etcd pods, for the exec relay, when not kubeadm's /usr/local/bin/etcdctl. Only with the workload kubeconfig. */
  relayBinary?: string;
  /** The relay's certificates inside the etcd pods, when not kubeadm's /etc/kubernetes/pki/etcd/ ones. Only with the workload kubeconfig. */
  relayTls?: NonNullable<KubeAccessConfig['relayTls']>;
}

export interface ManagementRegistration {
  /** A Secrets Manager secret holding the management cluster's kubeconfig (its text). */
  kubeconfigSecretArn: string;
  /** The Cluster's namespace in the management cluster. */
  namespace: string;
  /** The Cluster's name, as its Machines' cluster.x-k8s.io/cluster-name label gives it. */
  clusterName: string;
  /** Default v1beta1, which every CAPI release serves; v1beta2 from CAPI 1.11. */
  machineApiVersion?: MachineApiVersion;
}

/** A registration checked: its policy parsed, its path order folded in. */
export interface CheckedRegistration {
  registration: ClusterRegistration;
  policy: Policy;
}

const secretArn = z.string().regex(/^arn:aws[a-z-]*:secretsmanager:[^:]+:\d{12}:secret:.+$/, 'must be a Secrets Manager secret ARN');
/** RFC 1123 label: a namespace's name. */
const namespace = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a Kubernetes namespace name (lowercase letters, digits and -)');

const managementSchema = z.object({
  // First, so a registration copied from a pod's config is told why before anything else.
  inCluster: z
    .never({
      error:
        'the functions run on Lambda, in no cluster, so there is no service account to use: give kubeconfigSecretArn, a secret holding the management cluster’s kubeconfig',
    })
    .optional(),
  kubeconfigSecretArn: secretArn,
  namespace,
  clusterName: z.string().regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'must be a Cluster API Cluster name (lowercase letters, digits, - and .)'),
  machineApiVersion: z.enum(['v1beta1', 'v1beta2']).optional(),
});

const pathOrderSchema = z.array(pathNameSchema).min(1);

/** A file inside the etcd pods, by the rule every edge applies (pod-path.ts). */
const podPath = z
  .string({
    error: (issue) =>
      issue.input === undefined ? 'is required: the relay takes the CA, the client certificate and its key together' : 'must be a path inside the etcd pods',
  })
  .superRefine((text, ctx) => {
    const problem = podPathProblem(text);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const registrationSchema = z.object({
  clusterId: z.string().min(1),
  endpoints: z.array(z.url().refine((url) => !carriesCredentials(url), CREDENTIALS_IN_URL)).min(1),
  pathOrder: pathOrderSchema.optional(),
  policy: z.record(z.string(), z.unknown()).optional(),
  aliases: z.record(z.string(), z.string()).optional(),
  metricsUrls: metricsUrlsSchema.optional(),
  tlsSecretArn: secretArn.optional(),
  members: z.array(z.object({ memberName: z.string().min(1), instanceId: z.string().min(1).optional(), nodeName: z.string().min(1).optional() })).optional(),
  workloadKubeconfigSecretArn: secretArn.optional(),
  etcdNamespace: namespace.optional(),
  management: managementSchema.optional(),
  relayBinary: podPath.optional(),
  relayTls: z.object({ cacert: podPath, cert: podPath, key: podPath }).optional(),
});

export class ClusterRegistrationError extends Error {
  constructor(clusterId: string, field: string, problem: string) {
    super(`cluster ${clusterId || '(no id)'}: ${field}: ${problem}`);
    this.name = 'ClusterRegistrationError';
  }
}

const fieldOf = (path: readonly PropertyKey[]): string => path.map(String).join('.') || '(the entry)';

/**
 * Throws ClusterRegistrationError naming the cluster and the first field that is wrong. The policy
 * is checked as the cluster gives it, then parsed over `defaults` (already checked: see
 * policy-defaults.ts), the cluster's fields winning, and held to the budget rule
 * (step-budget-fit.ts): every step fits its Lambda timeout.
 */
export function checkRegistration(input: unknown, clusterIdHint = '', defaults?: PolicyInput): CheckedRegistration {
  const parsed = registrationSchema.safeParse(input);
  const clusterId = parsed.success ? parsed.data.clusterId : clusterIdHint;
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ClusterRegistrationError(clusterId, fieldOf(issue.path), issue.message);
  }
  const registration: ClusterRegistration = parsed.data;
  const policyInput: Record<string, unknown> = { ...registration.policy };
  if (registration.pathOrder) {
    const own = policyInput.pathOrder;
    if (own !== undefined && JSON.stringify(own) !== JSON.stringify(registration.pathOrder)) {
      throw new ClusterRegistrationError(clusterId, 'pathOrder', 'differs from policy.pathOrder; give one');
    }
    policyInput.pathOrder = registration.pathOrder;
  }
  // Strict at every depth: a misspelt field is refused, naming it, not ignored without a word.
  const wrong = firstPolicyProblem(policyInput);
  if (wrong) throw new ClusterRegistrationError(clusterId, wrong.field ? `policy.${wrong.field}` : 'policy', wrong.problem);
  checkMembers(registration);
  checkKube(registration);
  // Over the defaults too: a policy that fits alone may not under the stack's defaults (its backoff
  // base over their cap, a step past its budget), and is refused naming the field, not thrown raw.
  const merged = underDefaults(defaults, policyInput);
  const clash = firstPolicyProblem(merged);
  if (clash) throw new ClusterRegistrationError(clusterId, `policy.${clash.field}`, `${clash.problem} (with the stack's policy defaults)`);
  const policy = policySchema.parse(merged);
  const over = budgetProblem(policy);
  if (over) throw new ClusterRegistrationError(clusterId, `policy.${over.field}`, over.problem);
  return { registration, policy };
}

function checkMembers(registration: ClusterRegistration): void {
  const seen = new Map<string, number>();
  (registration.members ?? []).forEach((member, i) => {
    for (const field of ['instanceId', 'nodeName'] as const) {
      const value = member[field];
      if (value === undefined) continue;
      const earlier = seen.get(`${field}=${value}`);
      if (earlier !== undefined) throw new ClusterRegistrationError(registration.clusterId, `members.${i}.${field}`, `${value} is also members.${earlier}'s`);
      seen.set(`${field}=${value}`, i);
    }
  });
}

/** The kube settings hang off the workload cluster: without its kubeconfig they would do nothing. */
function checkKube(registration: ClusterRegistration): void {
  if (registration.workloadKubeconfigSecretArn !== undefined) return;
  for (const field of ['etcdNamespace', 'management'] as const) {
    if (registration[field] !== undefined) {
      throw new ClusterRegistrationError(
        registration.clusterId,
        field,
        'needs workloadKubeconfigSecretArn: members are matched to their pods, Nodes and Machines through the workload cluster',
      );
    }
  }
  for (const field of ['relayBinary', 'relayTls'] as const) {
    if (registration[field] !== undefined) {
      throw new ClusterRegistrationError(
        registration.clusterId,
        field,
        'needs workloadKubeconfigSecretArn: the exec relay runs etcdctl in the etcd pods of the workload cluster',
      );
    }
  }
}

/**
 * Registers (or re-registers) a cluster. The lookups are written first, each only if free or
 * already this cluster's: an instance or node registered to another cluster is refused, naming it.
 * Lookups the previous registration had and this one does not are removed last.
 */
export async function putCluster(client: DynamoDBClient, tableName: string, registration: ClusterRegistration, now: () => number = Date.now): Promise<void> {
  const { registration: checked } = checkRegistration(registration, registration.clusterId);
  const doc = documentClient(client);
  const { clusterId } = checked;
  const previous = (await doc.send(new GetCommand({ TableName: tableName, Key: clusterConfigKey(clusterId), ConsistentRead: true }))).Item;
  const wanted = lookupsOf(checked);
  for (const lookup of wanted) {
    const free = await conditionally(() =>
      doc.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...lookup.key, type: 'member-lookup', clusterId, memberName: lookup.memberName },
          ConditionExpression: 'attribute_not_exists(pk) OR clusterId = :c',
          ExpressionAttributeValues: { ':c': clusterId },
        }),
      ),
    );
    if (!free) {
      const holder = (await doc.send(new GetCommand({ TableName: tableName, Key: lookup.key, ConsistentRead: true }))).Item;
      throw new ClusterRegistrationError(clusterId, lookup.field, `${lookup.value} is registered to cluster ${String(holder?.clusterId)}`);
    }
  }
  await doc.send(new PutCommand({ TableName: tableName, Item: { ...clusterConfigKey(clusterId), type: 'cluster', ...checked, registeredAt: now() } }));
  // One small item a cluster in one partition: the storm guard counts the fleet without a scan.
  await doc.send(new PutCommand({ TableName: tableName, Item: { ...fleetClusterKey(clusterId), type: 'fleet-cluster', clusterId } }));
  const kept = new Set(wanted.map((l) => `${l.key.pk}`));
  const stale = previous ? lookupsOf(previousRegistration(previous)).filter((l) => !kept.has(l.key.pk)) : [];
  for (const lookup of stale) {
    await conditionally(() =>
      doc.send(
        new DeleteCommand({ TableName: tableName, Key: lookup.key, ConditionExpression: 'clusterId = :c', ExpressionAttributeValues: { ':c': clusterId } }),
      ),
    );
  }
}

interface Lookup {
  key: Key;
  field: string;
  value: string;
  memberName: string;
}

function lookupsOf(registration: ClusterRegistration): Lookup[] {
  return (registration.members ?? []).flatMap((member, i) => [
    ...(member.instanceId
      ? [{ key: instanceKey(member.instanceId), field: `members.${i}.instanceId`, value: member.instanceId, memberName: member.memberName }]
      : []),
    ...(member.nodeName ? [{ key: nodeKey(member.nodeName), field: `members.${i}.nodeName`, value: member.nodeName, memberName: member.memberName }] : []),
  ]);
}

/** Only its members matter here; whatever else is wrong with an old entry is being replaced. */
const previousRegistration = (item: Item): ClusterRegistration => {
  const members = Array.isArray(item.members) ? (item.members as ClusterRegistration['members']) : [];
  return { clusterId: String(item.clusterId), endpoints: [], members: (members ?? []).filter((m) => typeof m?.memberName === 'string') };
};
