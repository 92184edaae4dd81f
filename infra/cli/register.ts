// `register`: puts a cluster into the directory of a deployed stack (its DynamoDB table), as the
// functions on AWS read it: endpoints, the TLS secret, the kubeconfig secrets (the kube paths and
// Cluster API Machines), each member's instance or node (how the intake turns a health signal into
// a report), aliases and policy. Checked before anything is written, with the same check the
// functions make when they read it back.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { checkRegistration, ClusterRegistrationError, putCluster, type ClusterRegistration } from '../../functions/adapters/aws/cluster-registration.ts';
import { parseFlags, PROGRAM, requiredFlag, UsageError } from './args.ts';
import { CONTROLS_IN_CLUSTER_ID, parseEndpoints, relayOptions } from './cluster-flags.ts';
import { hasControls } from './control-chars.ts';
import { ConfigError, policyInputFromConfig } from './config.ts';
import { InputFileError, readInputText } from './input-file.ts';
import { EXIT, printJson } from './output.ts';
import { kubeFromFlags, membersFromFlags, metricsUrlsFromFlags, pairsFromFlag, type KubeFlags } from './register-flags.ts';

/** The stack's functions may read these secrets unless its secretArnPattern says otherwise. */
export { SECRET_NAME_PREFIX as SECRET_PREFIX } from '../../functions/adapters/aws/secrets.ts';
import { SECRET_NAME_PREFIX as SECRET_PREFIX } from '../../functions/adapters/aws/secrets.ts';

export const help = `usage: ${PROGRAM} register --table NAME --cluster ID --endpoints URL[,URL…] [options]

Registers a cluster in the cluster directory of a deployed stack (the DynamoDB table of its
TableName output), or registers it again, replacing what was there. The functions read it on the
next incident (a warm container within a minute). Credentials, and the endpoint when overridden,
come from the usual AWS environment and config.

  --table NAME              the stack's table, its TableName output (required)
  --cluster ID              the cluster's id, as events and reports name it (required)
  --endpoints URL[,URL…]    etcd client URLs the functions can reach (required)
  --tls-secret ARN          a Secrets Manager secret {"ca","cert","key"} (PEM) for etcd's TLS;
                            the stack's functions read secrets named ${SECRET_PREFIX}* by default
  --workload-kubeconfig-secret ARN
                            a secret holding the workload cluster's kubeconfig (its YAML text): the
                            port-forward and exec-relay paths, and each member's Node
  --etcd-namespace NS       where the etcd static pods run (default kube-system)
  --management-kubeconfig-secret ARN
                            a secret holding the Cluster API management cluster's kubeconfig, with
                            the workload's: the cluster's Machines are read there, and the removed
                            member's Machine is replaced
  --capi-namespace NS       the Cluster's namespace in the management cluster (required with it)
  --capi-cluster NAME       the Cluster's name (required with it)
  --machine-api-version V   v1beta2 (CAPI 1.11 on) or v1beta1; by default, the one the management
                            cluster's discovery prefers, asked at first need: v1beta2 where served
  --relay-binary PATH       etcdctl inside the etcd pods, for the exec relay (default: kubeadm's
                            image's /usr/local/bin/etcdctl); with --workload-kubeconfig-secret
  --relay-cacert PATH --relay-cert PATH --relay-key PATH
                            the certificates the relay's etcdctl is given inside the etcd pods,
                            all three or none (default: kubeadm's /etc/kubernetes/pki/etcd/ca.crt,
                            healthcheck-client.crt and healthcheck-client.key); absolute paths in
                            the container
  --member NAME=INSTANCE_ID an etcd member and its EC2 instance, as health events name it (repeat)
  --node NAME=NODE_NAME     an etcd member and its Kubernetes node (repeat)
  --alias OTHER=NAME        another name a report may use for member NAME, e.g. a Machine (repeat)
  --metrics-url NAME=URL    where member NAME (its name or id) serves /metrics, when not on its
                            client URL: etcd's --listen-metrics-urls, e.g. etcd-a=http://10.0.1.10:2381
                            (repeat); an http or https URL, /metrics added unless it names a path
  --policy FILE             the cluster's policy as JSON, as in run's config:
                            {"grace":"60s","electionTimeout":"1s","backoff":{"base":"5s","cap":"5m"}};
                            fields left out take the stack's policy defaults, then the built-in ones
  --region R                the AWS region (default: AWS_REGION or the AWS config)
  --dry-run                 check and print the registration; write nothing
  --json                    print the registration as JSON`;

const options = {
  table: { type: 'string' },
  cluster: { type: 'string' },
  endpoints: { type: 'string' },
  'tls-secret': { type: 'string' },
  'workload-kubeconfig-secret': { type: 'string' },
  'etcd-namespace': { type: 'string' },
  'management-kubeconfig-secret': { type: 'string' },
  'capi-namespace': { type: 'string' },
  'capi-cluster': { type: 'string' },
  'machine-api-version': { type: 'string' },
  ...relayOptions,
  member: { type: 'string', multiple: true },
  node: { type: 'string', multiple: true },
  alias: { type: 'string', multiple: true },
  'metrics-url': { type: 'string', multiple: true },
  policy: { type: 'string' },
  region: { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

function policyFromFile(file: string): ClusterRegistration['policy'] {
  let raw: unknown;
  try {
    raw = JSON.parse(readInputText(file));
  } catch (error) {
    throw new UsageError(`--policy ${file}: ${error instanceof InputFileError ? error.message : `is not JSON: ${(error as Error).message}`}`);
  }
  try {
    return policyInputFromConfig(raw);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`--policy ${file}: ${error.message}`);
    throw error;
  }
}

/** The registration's field as the flag that set it, for a refusal that names what to fix. */
const FLAG_OF: [RegExp, string][] = [
  [/: clusterId: /, ': --cluster: '],
  [/: endpoints(\.\d+)?: /, ': --endpoints: '],
  [/: tlsSecretArn: /, ': --tls-secret: '],
  [/: workloadKubeconfigSecretArn: /, ': --workload-kubeconfig-secret: '],
  [/: etcdNamespace: /, ': --etcd-namespace: '],
  [/: management\.kubeconfigSecretArn: /, ': --management-kubeconfig-secret: '],
  [/: management\.namespace: /, ': --capi-namespace: '],
  [/: management\.clusterName: /, ': --capi-cluster: '],
  [/: management\.machineApiVersion: /, ': --machine-api-version: '],
  [/: management: /, ': --management-kubeconfig-secret: '],
  [/: relayBinary: /, ': --relay-binary: '],
  [/: relayTls(\.cacert)?: /, ': --relay-cacert: '],
  [/: relayTls\.cert: /, ': --relay-cert: '],
  [/: relayTls\.key: /, ': --relay-key: '],
  [/needs workloadKubeconfigSecretArn/, 'needs --workload-kubeconfig-secret'],
  [/: members\.\d+\.instanceId: /, ': --member: '],
  [/: members\.\d+\.nodeName: /, ': --node: '],
  [/: aliases(\.[^:]*)?: /, ': --alias: '],
  [/: metricsUrls\.([^:]*): /, ': --metrics-url $1: '],
  [/: metricsUrls: /, ': --metrics-url: '],
  [/: policy\./, ': --policy: '],
];
const flagNamed = (message: string): string => FLAG_OF.reduce((text, [field, flag]) => text.replace(field, flag), message);

/** A registration has no etcd user (yet): nothing to give instead but the endpoint without them. */
const REGISTER_CREDENTIALS = 'register takes no etcd credentials: register the endpoint without them';

export interface RegisterFlags extends KubeFlags {
  cluster?: string;
  endpoints?: string;
  'tls-secret'?: string;
  member?: string[];
  node?: string[];
  alias?: string[];
  'metrics-url'?: string[];
  policy?: string;
}

export function registrationFromFlags(values: RegisterFlags): ClusterRegistration {
  const clusterId = requiredFlag('cluster', values.cluster, 'prod-eu-1');
  if (hasControls(clusterId)) throw new UsageError(`--cluster: ${CONTROLS_IN_CLUSTER_ID}`);
  const registration: ClusterRegistration = { clusterId, endpoints: parseEndpoints(values.endpoints, REGISTER_CREDENTIALS) };
  if (values['tls-secret'] !== undefined) registration.tlsSecretArn = values['tls-secret'];
  Object.assign(registration, kubeFromFlags(values));
  const members = membersFromFlags(values.member ?? [], values.node ?? []);
  if (members.length > 0) registration.members = members;
  const aliases = pairsFromFlag('alias', 'OTHER=NAME', values.alias ?? []);
  if (aliases.length > 0) registration.aliases = Object.fromEntries(aliases);
  const metricsUrls = metricsUrlsFromFlags(values['metrics-url'] ?? []);
  if (metricsUrls) registration.metricsUrls = metricsUrls;
  if (values.policy !== undefined) registration.policy = policyFromFile(values.policy);
  try {
    checkRegistration(registration, clusterId);
  } catch (error) {
    if (error instanceof ClusterRegistrationError) throw new UsageError(flagNamed(error.message));
    throw error;
  }
  return registration;
}

const describe = (r: ClusterRegistration): string => {
  const members = (r.members ?? []).map((m) => `${m.memberName} (${[m.instanceId, m.nodeName].filter(Boolean).join(', ')})`);
  return [
    `${r.endpoints.length} endpoint${r.endpoints.length === 1 ? '' : 's'}`,
    members.length > 0 ? `members ${members.join(', ')}` : 'no members (health signals cannot name an instance or node of it)',
    r.tlsSecretArn ? `TLS from ${r.tlsSecretArn}` : 'no TLS',
    ...(r.workloadKubeconfigSecretArn
      ? [`workload kubeconfig from ${r.workloadKubeconfigSecretArn}${r.etcdNamespace ? ` (etcd pods in ${r.etcdNamespace})` : ''}`]
      : []),
    ...(r.management
      ? [`Cluster API Cluster ${r.management.namespace}/${r.management.clusterName} through the management kubeconfig from ${r.management.kubeconfigSecretArn}`]
      : []),
    ...(r.relayBinary || r.relayTls
      ? [
          `exec relay in the etcd pods: ${[r.relayBinary && `etcdctl ${r.relayBinary}`, r.relayTls && `certificates ${r.relayTls.cacert}, ${r.relayTls.cert}, ${r.relayTls.key}`].filter(Boolean).join(' and ')}`,
        ]
      : []),
    ...(r.metricsUrls
      ? [
          `metrics of ${Object.entries(r.metricsUrls)
            .map(([member, url]) => `${member} at ${url}`)
            .join(', ')}`,
        ]
      : []),
    r.policy && Object.keys(r.policy).length > 0 ? `policy ${JSON.stringify(r.policy)}` : 'the stack’s default policy',
  ].join('; ');
};

/** Every secret the registration names, by the flag that gave it. */
const secretsOf = (r: ClusterRegistration): [string, string][] =>
  (
    [
      ['tls-secret', r.tlsSecretArn],
      ['workload-kubeconfig-secret', r.workloadKubeconfigSecretArn],
      ['management-kubeconfig-secret', r.management?.kubeconfigSecretArn],
    ] as const
  ).flatMap(([flag, arn]) => (arn === undefined ? [] : [[flag, arn]]));

export async function register(argv: string[], clientFor: (region?: string) => DynamoDBClient = dynamoClient): Promise<number> {
  const { values } = parseFlags('register', argv, options);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  const table = requiredFlag('table', values.table, 'EtcdRemediator-RemediationTable…');
  const registration = registrationFromFlags(values);
  for (const [flag, arn] of secretsOf(registration)) {
    if (!arn.includes(`:secret:${SECRET_PREFIX}`)) {
      process.stderr.write(
        `note: the stack's functions may read only secrets named ${SECRET_PREFIX}* unless its secretArnPattern allows this one (--${flag})\n`,
      );
    }
  }
  if (!values['dry-run']) {
    try {
      await putCluster(clientFor(values.region), table, registration);
    } catch (error) {
      // Another cluster holding a member's instance or node is the caller's to fix, as a bad flag is.
      if (error instanceof ClusterRegistrationError) throw new UsageError(flagNamed(error.message));
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      if (/region is missing|region="" /i.test(message)) throw new UsageError('--region is required: no region in AWS_REGION or the AWS config');
      throw new Error(`writing cluster ${registration.clusterId} to table ${table} failed: ${message}`, { cause: error });
    }
  }
  if (values.json) printJson(registration);
  else
    process.stdout.write(
      `${values['dry-run'] ? 'would register' : 'registered'} cluster ${registration.clusterId} in table ${table}: ${describe(registration)}\n`,
    );
  return EXIT.ok;
}

// Without --region the SDK takes AWS_REGION, then the AWS config, as the aws CLI does.
const dynamoClient = (region?: string): DynamoDBClient => new DynamoDBClient(region ? { region } : {});

export const run = (argv: string[]): Promise<number> => register(argv);
