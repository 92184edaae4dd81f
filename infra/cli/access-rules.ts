// How a cluster is reached, from the command line and from the run config alike: client URLs, a
// kubeconfig (the workload cluster itself, or Cluster API's management cluster, the workload's
// kubeconfig then read from the `<cluster>-kubeconfig` Secret), the order of the paths, and where the
// exec relay finds etcdctl and its certificates inside the etcd pods. One set of rules; every
// problem names the flag or field as the user wrote it. The Kubernetes client is
// loaded only for a cluster that has a kubeconfig: it costs a command that has none half a second.
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  carriesCredentials,
  CREDENTIALS_IN_URL,
  withoutCredentials,
  pathNameOf,
  podPathProblem,
  PATH_NAMES,
  type PathName,
  KUBE_PATHS,
} from '../../functions/core/common/index.ts';
import type { KubeAccessConfig } from '../../functions/ports/kube-access.ts';
import { withTimeout } from '../../functions/lib/with-timeout.ts';
import { InputFileError, readInputText } from './input-file.ts';

export type AccessField = 'endpoints' | 'kubeconfig' | 'workloadKubeconfig' | 'capiCluster' | 'namespace' | 'paths' | RelayField;

/** The exec relay's files inside the etcd pods: etcdctl, and the CA, certificate and key it is given. */
export type RelayField = 'relayBinary' | 'relayCacert' | 'relayCert' | 'relayKey';

/** How one edge names its fields in a sentence, and the error it throws. */
export interface AccessWords {
  /** The field a problem is about, leading the sentence: `--paths`, `clusters[0].paths (cluster prod)`. */
  where: (field: AccessField) => string;
  /** Another field, as the sentence mentions it: `--kubeconfig`, `kubeconfig`. */
  ref: (field: AccessField) => string;
  fail: (message: string) => Error;
}

export interface AccessInput {
  hasEndpoints: boolean;
  /** Files, as written; relative ones resolve against `baseDir`. */
  kubeconfig?: string | undefined;
  workloadKubeconfig?: string | undefined;
  /** The Cluster API Cluster's name: makes `kubeconfig` the management cluster's. */
  capiCluster?: string | undefined;
  namespace?: string | undefined;
  /** Path names as written, in order. */
  paths?: readonly string[] | undefined;
  relay?: RelayInput;
  baseDir?: string;
}

/** Paths inside the etcd pods, as written; kubeadm's stand for those left out. */
export interface RelayInput {
  binary?: string | undefined;
  cacert?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
}

export type RelaySettings = Pick<KubeAccessConfig, 'relayBinary' | 'relayTls'>;

/** Checked access, its files read: the Secret, if one is needed, is still to be read. */
export interface Access {
  pathOrder: PathName[];
  kube?: KubeFiles;
}

interface KubeconfigText {
  /** As written, for messages. */
  file: string;
  text: string;
}

interface KubeFiles {
  /** The workload cluster's, or the management cluster's with `capi`. */
  kubeconfig: KubeconfigText;
  workloadKubeconfig?: KubeconfigText;
  capi?: { clusterName: string; namespace: string };
  relay: RelaySettings;
}

export const DEFAULT_CAPI_NAMESPACE = 'default';

const PATH_LIST = PATH_NAMES.join(', ');

/** Path names as written, to paths in order: none, an unknown name or one listed twice is refused, naming `where`. */
export function pathNamesOf(names: readonly string[], where: string, fail: (message: string) => Error): PathName[] {
  if (names.length === 0) throw fail(`${where}: give at least one of ${PATH_LIST}`);
  const order: PathName[] = [];
  for (const name of names) {
    const path = pathNameOf(name);
    if (path === undefined) throw fail(`${where}: ${JSON.stringify(name)} is not a path (use ${PATH_LIST})`);
    if (order.includes(path)) throw fail(`${where}: ${name} is listed twice`);
    order.push(path);
  }
  return order;
}

function pathOrderOf(input: AccessInput, words: AccessWords): PathName[] {
  const kube = input.kubeconfig !== undefined;
  if (input.paths === undefined) return [...(input.hasEndpoints ? (['direct'] as const) : []), ...(kube ? KUBE_PATHS : [])];
  const where = words.where('paths');
  const order = pathNamesOf(input.paths, where, words.fail);
  input.paths.forEach((name, i) => {
    const path = order[i]!;
    if (path !== 'direct' && !kube)
      throw words.fail(`${where}: ${name} needs ${words.ref('kubeconfig')}: the kube paths reach each member through the workload cluster's API server`);
    if (path === 'direct' && !input.hasEndpoints) throw words.fail(`${where}: direct needs ${words.ref('endpoints')}, the client URLs it dials`);
  });
  return order;
}

function checkKubeFields(input: AccessInput, words: AccessWords): void {
  const { ref } = words;
  if (!input.hasEndpoints && input.kubeconfig === undefined) {
    throw words.fail(
      `${ref('endpoints')} or ${ref('kubeconfig')} is required: give one (client URLs to dial, or a kubeconfig to find the members through their etcd pods)`,
    );
  }
  const capi = input.kubeconfig !== undefined && input.capiCluster !== undefined;
  if (input.capiCluster !== undefined && input.kubeconfig === undefined) {
    throw words.fail(`${words.where('capiCluster')}: needs ${ref('kubeconfig')}, the Cluster API management cluster's kubeconfig`);
  }
  if (input.workloadKubeconfig !== undefined && !capi) {
    throw words.fail(
      `${words.where('workloadKubeconfig')}: needs ${ref('kubeconfig')} (the management cluster) and ${ref('capiCluster')}; a workload cluster alone is reached with its kubeconfig as ${ref('kubeconfig')}`,
    );
  }
  if (input.namespace !== undefined && !capi) {
    throw words.fail(
      `${words.where('namespace')}: needs ${ref('kubeconfig')} and ${ref('capiCluster')}: it is the Cluster API cluster's namespace in the management cluster`,
    );
  }
  if (input.namespace !== undefined && input.namespace.trim() === '') throw words.fail(`${words.where('namespace')}: must not be empty`);
}

/** The kubeconfig's text, read once; one that cannot be read is refused (kubeAccessOf checks what it says). */
function readKubeconfig(file: string, field: 'kubeconfig' | 'workloadKubeconfig', input: AccessInput, words: AccessWords): KubeconfigText {
  try {
    return { file, text: readInputText(path.resolve(input.baseDir ?? '.', file)) };
  } catch (error) {
    const problem =
      error instanceof InputFileError && error.code === undefined
        ? `${file}: ${error.message}`
        : `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
    throw words.fail(`${words.where(field)}: ${problem}`);
  }
}

const kubeModules = async () => ({
  ...(await import('../../functions/adapters/kube/kube-config.ts')),
  ...(await import('../../functions/adapters/kube/cluster-api/cluster-access.ts')),
});
type KubeModules = Awaited<ReturnType<typeof kubeModules>>;

function notAKubeconfig(kube: KubeModules, text: string): string | undefined {
  try {
    const config = kube.kubeConfigFrom(text);
    return config.getCurrentCluster() ? undefined : 'its current context names no cluster';
  } catch (error) {
    return (error instanceof Error ? error.message : String(error)).split('\n')[0];
  }
}

const RELAY_FIELDS = { binary: 'relayBinary', cacert: 'relayCacert', cert: 'relayCert', key: 'relayKey' } as const satisfies Record<
  keyof RelayInput,
  RelayField
>;
const TLS_PARTS = ['cacert', 'cert', 'key'] as const;

/** The relay settings given, in RELAY_FIELDS' order. */
const givenRelayParts = (input: RelayInput): (keyof RelayInput)[] =>
  (Object.keys(RELAY_FIELDS) as (keyof RelayInput)[]).filter((part) => input[part] !== undefined);

/**
 * The exec relay's paths inside the etcd pods, checked: each absolute, with no whitespace or shell
 * character; the CA, certificate and key together or not at all (a certificate beside kubeadm's
 * key would never match it); and only with exec-relay in the path order, where something runs them
 * (`pathOrder` undefined: not known here, as for a registration the stack's defaults complete).
 */
export function relaySettingsOf(input: RelayInput, pathOrder: readonly PathName[] | undefined, words: AccessWords): RelaySettings {
  const given = givenRelayParts(input);
  if (given.length === 0) return {};
  for (const part of given) {
    const problem = podPathProblem(input[part]!);
    if (problem) throw words.fail(`${words.where(RELAY_FIELDS[part])}: ${problem}`);
  }
  const tlsGiven = TLS_PARTS.filter((part) => input[part] !== undefined);
  const missing = TLS_PARTS.find((part) => input[part] === undefined);
  if (tlsGiven.length > 0 && missing !== undefined) {
    const others = tlsGiven.map((part) => words.ref(RELAY_FIELDS[part])).join(' and ');
    throw words.fail(
      `${words.where(RELAY_FIELDS[missing])}: is required with ${others}: the relay's etcdctl takes the CA, the client certificate and its key together (kubeadm's three when none is given)`,
    );
  }
  if (pathOrder !== undefined && !pathOrder.includes('exec-relay')) {
    throw words.fail(
      `${words.where(RELAY_FIELDS[given[0]!])}: the path order (${pathOrder.join(',')}) has no exec-relay, so nothing would run it: add exec-relay to ${words.ref('paths')}`,
    );
  }
  const { binary, cacert, cert, key } = input;
  return {
    ...(binary === undefined ? {} : { relayBinary: binary }),
    ...(cacert !== undefined && cert !== undefined && key !== undefined ? { relayTls: { cacert, cert, key } } : {}),
  };
}

/** A relay setting without a kubeconfig would do nothing: there are no etcd pods to run it in. */
function checkRelayNeedsKube(input: AccessInput, words: AccessWords): void {
  if (input.kubeconfig !== undefined) return;
  const [part] = givenRelayParts(input.relay ?? {});
  if (part !== undefined)
    throw words.fail(`${words.where(RELAY_FIELDS[part])}: needs ${words.ref('kubeconfig')}: the exec relay runs etcdctl in the cluster's etcd pods`);
}

/** The rules, and the kubeconfig files read; throws `words.fail(…)` naming the first problem. */
export function checkAccess(input: AccessInput, words: AccessWords): Access {
  checkKubeFields(input, words);
  checkRelayNeedsKube(input, words);
  const pathOrder = pathOrderOf(input, words);
  if (input.kubeconfig === undefined) return { pathOrder };
  const relay = relaySettingsOf(input.relay ?? {}, pathOrder, words);
  const kubeconfig = readKubeconfig(input.kubeconfig, 'kubeconfig', input, words);
  const workload =
    input.workloadKubeconfig === undefined ? {} : { workloadKubeconfig: readKubeconfig(input.workloadKubeconfig, 'workloadKubeconfig', input, words) };
  const capi = input.capiCluster === undefined ? {} : { capi: { clusterName: input.capiCluster, namespace: input.namespace ?? DEFAULT_CAPI_NAMESPACE } };
  return { pathOrder, kube: { kubeconfig, ...workload, ...capi, relay } };
}

/** How long the management cluster has to hand over the workload kubeconfig. */
const SECRET_DEADLINE_MS = 10_000;

const secretWithin = <T>(read: Promise<T>, what: string): Promise<T> =>
  withTimeout(
    SECRET_DEADLINE_MS,
    () => read,
    () => new Error(`reading ${what} failed: the management cluster did not answer within ${SECRET_DEADLINE_MS / 1_000}s`),
  );

/** The first cluster of a kubeconfig whose server URL carries credentials, said without them. */
export function serverCredentials(config: Pick<KubeConfig, 'clusters'>): string | undefined {
  const leaky = config.clusters.find((cluster) => carriesCredentials(cluster.server));
  return (
    leaky &&
    `cluster ${leaky.name}'s server ${withoutCredentials(leaky.server)} ${CREDENTIALS_IN_URL}; give them as the kubeconfig's user entry (a token or a client certificate)`
  );
}

/** A kubeconfig's text, once checked that it is one. */
function kubeconfigOf(kube: KubeModules, given: KubeconfigText, field: 'kubeconfig' | 'workloadKubeconfig', words: AccessWords): string {
  const problem = notAKubeconfig(kube, given.text);
  if (problem) throw words.fail(`${words.where(field)}: ${given.file} is not a kubeconfig: ${problem}`);
  const leaky = serverCredentials(kube.kubeConfigFrom(given.text));
  if (leaky) throw words.fail(`${words.where(field)}: ${given.file}: ${leaky}`);
  return given.text;
}

/**
 * The KubeAccessConfig the runtime builds clients from. Under Cluster API without a workload
 * kubeconfig of its own, reads it from the Secret; a missing or unreadable one is refused, named.
 */
export async function kubeAccessOf(files: KubeFiles, words: AccessWords): Promise<KubeAccessConfig> {
  const kube = await kubeModules();
  const kubeconfig = kubeconfigOf(kube, files.kubeconfig, 'kubeconfig', words);
  const given = files.workloadKubeconfig && kubeconfigOf(kube, files.workloadKubeconfig, 'workloadKubeconfig', words);
  if (!files.capi) return { workloadKubeconfig: kubeconfig, ...files.relay };
  const { clusterName, namespace } = files.capi;
  return {
    workloadKubeconfig: given || (await fromSecret(kube, kubeconfig, files.capi, words)),
    management: { kubeconfig, namespace, clusterName },
    ...files.relay,
  };
}

async function fromSecret(
  kube: KubeModules,
  management: string,
  { clusterName, namespace }: { clusterName: string; namespace: string },
  words: AccessWords,
): Promise<string> {
  const secret = `Secret ${namespace}/${kube.kubeconfigSecretName(clusterName)}`;
  let workloadKubeconfig: string;
  try {
    workloadKubeconfig = await secretWithin(kube.workloadKubeconfigFromSecret(kube.kubeConfigFrom(management), namespace, clusterName), secret);
  } catch (error) {
    // The adapter's hint names the flags; the config's fields are named otherwise.
    const said = (error instanceof Error ? error.message : String(error))
      .replace('--namespace', words.ref('namespace'))
      .replace('--workload-kubeconfig', words.ref('workloadKubeconfig'));
    throw words.fail(`${words.where('capiCluster')}: ${said}`);
  }
  const problem = notAKubeconfig(kube, workloadKubeconfig);
  if (problem) throw words.fail(`${words.where('capiCluster')}: ${secret} holds no kubeconfig: ${problem}`);
  const leaky = serverCredentials(kube.kubeConfigFrom(workloadKubeconfig));
  if (leaky) throw words.fail(`${words.where('capiCluster')}: ${secret}: ${leaky}`);
  return workloadKubeconfig;
}
