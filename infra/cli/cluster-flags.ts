// The flags that name a cluster and how to talk to it, shared by probe, plan and remediate, and
// their translation into a cluster entry with its policy.
import { carriesCredentials, CREDENTIALS_IN_URL, withoutCredentials, type PathName } from '../../functions/core/common/index.ts';
import { defaultPolicy, MIN_ELECTION_TIMEOUT_MS, type Policy, type PolicyInput } from '../../functions/core/policy/index.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';
import type { EtcdUser, TlsFiles } from '../../functions/ports/etcd.ts';
import { checkAccess, kubeAccessOf, relaySettingsOf, type AccessField, type AccessWords, type RelayInput, type RelaySettings } from './access-rules.ts';
import { durationFlag, requiredFlag, UsageError } from './args.ts';
import { hasControls } from './control-chars.ts';
import { formatDuration } from './duration.ts';
import { etcdUserFrom, passwordRefused, type UserWords } from './etcd-user.ts';
import { readTlsFiles } from './tls-files.ts';
import { checkedPolicy } from './zod-issues.ts';

export const clusterOptions = {
  endpoints: { type: 'string' },
  cluster: { type: 'string' },
  timeout: { type: 'string' },
  'election-timeout': { type: 'string' },
  cacert: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  user: { type: 'string' },
  'password-file': { type: 'string' },
  // Only to refuse it with a reason: a password on the command line lands in shell history.
  password: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** Where the exec relay finds etcdctl and its certificates inside the etcd pods, when not where kubeadm puts them. */
export const relayOptions = {
  'relay-binary': { type: 'string' },
  'relay-cacert': { type: 'string' },
  'relay-cert': { type: 'string' },
  'relay-key': { type: 'string' },
} as const;

/** The flags that reach a cluster through Kubernetes, beside its client URLs. */
export const accessOptions = {
  ...clusterOptions,
  kubeconfig: { type: 'string' },
  'workload-kubeconfig': { type: 'string' },
  namespace: { type: 'string' },
  paths: { type: 'string' },
  ...relayOptions,
} as const;

/** relayOptions' help, for every command that takes them. */
export const relayHelp = `  --relay-binary PATH      etcdctl inside the etcd pods, for the exec relay (default: kubeadm's
                           image's /usr/local/bin/etcdctl)
  --relay-cacert PATH --relay-cert PATH --relay-key PATH
                           the certificates the relay's etcdctl is given inside the etcd pods,
                           all three or none (default: kubeadm's /etc/kubernetes/pki/etcd/ca.crt,
                           healthcheck-client.crt and healthcheck-client.key); absolute paths in
                           the container, not on this machine`;

export const clusterHelp = `  --endpoints URL[,URL…]   client URLs to ask for the member list (required)
  --cluster ID             the cluster's name in state and events (default: default)
  --timeout DUR            deadline of each etcd call (default: ${formatDuration(defaultPolicy.callTimeoutMs)})
  --election-timeout DUR   the cluster's --election-timeout, at least ${MIN_ELECTION_TIMEOUT_MS}ms (default: ${formatDuration(defaultPolicy.electionTimeoutMs)}, etcd's default)
  --cacert F --cert F --key F   TLS: CA bundle, and client certificate and key for mTLS
  --user NAME              the etcd user, when etcd has authentication enabled (removing a member
                           needs its root role); the password from --password-file F (one line,
                           mode 600) or ETCDCTL_PASSWORD, never from a flag value
  --json                   print JSON instead of text`;

/** clusterHelp for commands that take accessOptions. */
export const accessHelp = `  --endpoints URL[,URL…]   client URLs to ask for the member list (required without --kubeconfig)
  --kubeconfig F           reach the cluster through Kubernetes too. With --cluster NAME, F is the
                           Cluster API management cluster's: the workload kubeconfig is read from
                           Secret NAME-kubeconfig (key value) in --namespace, and NAME's Machines
                           there are read and replaced. Without --cluster, F is the workload
                           cluster's own (etcd pods and Nodes; no Machines). The members are found
                           through their etcd pods, so --endpoints is optional
  --cluster ID             the cluster's name in state and events (default: default); with
                           --kubeconfig, also its Cluster API name
  --workload-kubeconfig F  the workload cluster's kubeconfig, instead of the Secret (with
                           --kubeconfig and --cluster)
  --namespace NS           the Cluster API cluster's namespace (default: default)
  --paths P[,P…]           how to reach each member, in order: direct (its client URL),
                           port-forward (to its etcd pod), exec-relay (etcdctl in another
                           member's etcd pod). Default: direct with --endpoints, then
                           port-forward,exec-relay with --kubeconfig
${relayHelp}
${clusterHelp.split('\n').slice(2).join('\n')}`;

type FlagValues<O extends Record<string, { type: string }>> = { [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string };
type ClusterFlagValues = FlagValues<typeof clusterOptions>;
export type AccessFlagValues = FlagValues<typeof accessOptions>;

/** An etcd client URL: http or https, with an explicit port. Flags and config files agree on it. */
export function isClientUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.port !== '';
  } catch {
    return false;
  }
}

/** Where etcd credentials go instead of an endpoint's URL, for the commands that take them. */
export const CREDENTIALS_INSTEAD = 'use --user with --password-file (or ETCDCTL_PASSWORD)';

/** The --endpoints list; one with credentials in it is refused first, shown without them (no other message may quote it). */
export function parseEndpoints(value: string | undefined, credentialsInstead = CREDENTIALS_INSTEAD): string[] {
  const list = requiredFlag('endpoints', value, 'http://127.0.0.1:2379')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (list.length === 0) throw new UsageError('--endpoints: give at least one URL, e.g. http://127.0.0.1:2379');
  const leaky = list.find(carriesCredentials);
  if (leaky !== undefined) throw new UsageError(`--endpoints: ${withoutCredentials(leaky)} ${CREDENTIALS_IN_URL}; ${credentialsInstead}`);
  const bad = list.find((endpoint) => !isClientUrl(endpoint));
  if (bad !== undefined) throw new UsageError(`--endpoints: ${JSON.stringify(bad)} is not a client URL (use e.g. http://127.0.0.1:2379)`);
  return list;
}

export function tlsFromFlags(values: { cacert?: string | undefined; cert?: string | undefined; key?: string | undefined }): TlsFiles | undefined {
  const { cacert, cert, key } = values;
  if (cacert === undefined && cert === undefined && key === undefined) return undefined;
  if (cacert === undefined) throw new UsageError('--cacert is required with --cert and --key');
  if ((cert === undefined) !== (key === undefined))
    throw new UsageError(cert === undefined ? '--cert is required with --key' : '--key is required with --cert');
  return readTlsFiles({ cacert, cert, key }, { name: (field, file) => `--${field} ${file}`, fail: (message) => new UsageError(message) });
}

const userWords: UserWords = { user: '--user', passwordFile: '--password-file', fail: (message) => new UsageError(message) };

/** The etcd user the flags give, its password read; undefined for none. */
export function etcdUserFromFlags(values: {
  user?: string | undefined;
  'password-file'?: string | undefined;
  password?: string | undefined;
}): EtcdUser | undefined {
  if (values.password !== undefined) throw new UsageError(passwordRefused('--password', userWords));
  return etcdUserFrom({ user: values.user, passwordFile: values['password-file'] }, userWords);
}

const FLAGS: Readonly<Record<AccessField, string>> = {
  endpoints: '--endpoints',
  kubeconfig: '--kubeconfig',
  workloadKubeconfig: '--workload-kubeconfig',
  capiCluster: '--cluster',
  namespace: '--namespace',
  paths: '--paths',
  relayBinary: '--relay-binary',
  relayCacert: '--relay-cacert',
  relayCert: '--relay-cert',
  relayKey: '--relay-key',
};

export const flagWords: AccessWords = { where: (field) => FLAGS[field], ref: (field) => FLAGS[field], fail: (message) => new UsageError(message) };

type RelayFlagValues = FlagValues<typeof relayOptions>;

const relayInputOf = (values: RelayFlagValues): RelayInput => ({
  binary: values['relay-binary'],
  cacert: values['relay-cacert'],
  cert: values['relay-cert'],
  key: values['relay-key'],
});

/** The relay flags, checked against the path order (undefined: not known here, as for register). */
export const relayFromFlags = (values: RelayFlagValues, pathOrder: readonly PathName[] | undefined): RelaySettings =>
  relaySettingsOf(relayInputOf(values), pathOrder, flagWords);

/** A cluster id is printed on every line about its cluster: a newline in it would forge one. */
export const CONTROLS_IN_CLUSTER_ID = 'must not hold control characters (a newline, a tab, an escape…): it starts every line said about the cluster';

function clusterIdOf(values: ClusterFlagValues): string {
  const clusterId = values.cluster ?? 'default';
  if (clusterId.trim() === '') throw new UsageError('--cluster: must not be empty');
  if (hasControls(clusterId)) throw new UsageError(`--cluster: ${CONTROLS_IN_CLUSTER_ID}`);
  return clusterId;
}

/** The flags that set a policy duration, and the field each sets: one table to read them and to name them in a refusal. */
const DURATION_FLAGS = { timeout: 'callTimeoutMs', 'election-timeout': 'electionTimeoutMs', grace: 'graceMs' } as const satisfies Record<
  string,
  keyof PolicyInput
>;
type DurationFlag = keyof typeof DURATION_FLAGS;
export type DurationFlagValues = { [F in DurationFlag]?: string | undefined };

/** The policy durations the flags give; a flag left out sets nothing, so the policy's default stands. */
export function durationsFromFlags(values: DurationFlagValues): PolicyInput {
  const input: PolicyInput = {};
  for (const flag of Object.keys(DURATION_FLAGS) as DurationFlag[]) {
    const ms = durationFlag(flag, values[flag]);
    if (ms !== undefined) input[DURATION_FLAGS[flag]] = ms;
  }
  return input;
}

/** Each policy field a flag sets, by the flag's name: `--timeout` for callTimeoutMs. */
const FLAG_OF_FIELD: ReadonlyMap<PropertyKey, string> = new Map([
  ...(Object.keys(DURATION_FLAGS) as DurationFlag[]).map((flag) => [DURATION_FLAGS[flag], flag] as const),
  ['pathOrder', 'paths'],
  ['backoff', 'backoff'],
]);

const flagOf = (path: readonly PropertyKey[]): PropertyKey[] => {
  const flag = FLAG_OF_FIELD.get(path[0] ?? '');
  return flag === undefined ? ['policy', ...path] : [`--${flag}`];
};

/** The policy the flags make, by the policy's own rules: a refusal names the flag (`--election-timeout: must be at least 100ms …`). */
export const policyFromFlags = (input: PolicyInput): Policy => checkedPolicy(input, (message) => new UsageError(message), flagOf);

function entryFromFlags(
  values: ClusterFlagValues & DurationFlagValues,
  endpoints: string[],
  pathOrder: PathName[],
  extra: PolicyInput,
): ClusterEntry & { policy: Policy } {
  const policy = policyFromFlags({ ...durationsFromFlags(values), pathOrder, ...extra });
  const clusterId = clusterIdOf(values);
  const tls = tlsFromFlags(values);
  const auth = etcdUserFromFlags(values);
  return { clusterId, endpoints, policy, ...(tls ? { tls } : {}), ...(auth ? { auth } : {}) };
}

/** The cluster entry the flags describe, direct access only; `extra` adds command-specific policy (grace, …). */
export function clusterFromFlags(values: ClusterFlagValues & DurationFlagValues, extra: PolicyInput = {}): ClusterEntry & { policy: Policy } {
  return entryFromFlags(values, parseEndpoints(values.endpoints), ['direct'], extra);
}

/** Whether the flags give a kubeconfig, and whether it is a Cluster API management cluster's. */
export const kubeGiven = (values: AccessFlagValues): { kubeconfig: boolean; capi: boolean } => ({
  kubeconfig: values.kubeconfig !== undefined,
  capi: values.kubeconfig !== undefined && values.cluster !== undefined,
});

/**
 * The cluster entry the flags describe, Kubernetes access included: every flag is checked before
 * the management cluster is asked for the workload kubeconfig.
 */
export async function clusterAccessFromFlags(
  values: AccessFlagValues & DurationFlagValues,
  extra: PolicyInput = {},
): Promise<ClusterEntry & { policy: Policy }> {
  const endpoints = values.endpoints === undefined ? [] : parseEndpoints(values.endpoints);
  const capiCluster = kubeGiven(values).capi ? clusterIdOf(values) : undefined;
  const access = checkAccess(
    {
      hasEndpoints: endpoints.length > 0,
      kubeconfig: values.kubeconfig,
      workloadKubeconfig: values['workload-kubeconfig'],
      capiCluster,
      namespace: values.namespace,
      paths: values.paths
        ?.split(',')
        .map((p) => p.trim())
        .filter(Boolean),
      relay: relayInputOf(values),
    },
    flagWords,
  );
  const entry = entryFromFlags(values, endpoints, access.pathOrder, extra);
  return access.kube ? { ...entry, kube: await kubeAccessOf(access.kube, flagWords) } : entry;
}
