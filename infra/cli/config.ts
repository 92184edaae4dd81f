// The config file of `run`: clusters, their endpoints, credentials and policy, where to keep state
// and where to listen. Validated with zod; an error names the field, e.g. clusters[0].endpoints.
import path from 'node:path';
import { z } from 'zod';
import { carriesCredentials, CREDENTIALS_IN_URL, metricsUrlsSchema } from '../../functions/core/common/index.ts';
import type { Policy, PolicyInput } from '../../functions/core/policy/index.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';
import type { EtcdUser, TlsFiles } from '../../functions/ports/etcd.ts';
import type { KubeAccessConfig } from '../../functions/ports/kube-access.ts';
import { checkAccess, kubeAccessOf, type AccessField, type AccessWords } from './access-rules.ts';
import { CONTROLS_IN_CLUSTER_ID, isClientUrl } from './cluster-flags.ts';
import { hasControls } from './control-chars.ts';
import { etcdUserFrom, passwordNotTaken, type UserWords } from './etcd-user.ts';
import { InputFileError, readInputFile, readInputText, type InputFile } from './input-file.ts';
import { readTlsFiles } from './tls-files.ts';
import { writtenPolicySchema } from './written-policy.ts';
import { checkedPolicy, describeIssues, plainWords } from './zod-issues.ts';
import { snapshotDirFrom } from './snapshot-dir.ts';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

// Credentials first, and alone: no other message may quote the URL.
const endpoint = z
  .string()
  .refine((url) => !carriesCredentials(url), { message: `${CREDENTIALS_IN_URL}; use auth.user with auth.passwordFile (or ETCDCTL_PASSWORD)`, abort: true })
  .refine(isClientUrl, 'must be a client URL such as http://127.0.0.1:2379');

const file = z.string().min(1, 'must name a file');

const clusterSchema = z
  .strictObject({
    clusterId: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .refine((id) => !hasControls(id), CONTROLS_IN_CLUSTER_ID),
    endpoints: z.array(endpoint).min(1, 'must list at least one client URL').optional(),
    tls: z.strictObject({ cacert: z.string().min(1), cert: z.string().min(1).optional(), key: z.string().min(1).optional() }).optional(),
    // The password from passwordFile or ETCDCTL_PASSWORD; `password` is named only to refuse it.
    auth: z.strictObject({ user: z.string(), passwordFile: file.optional(), password: z.unknown().optional() }).optional(),
    policy: writtenPolicySchema.optional(),
    aliases: z.record(z.string(), z.string()).optional(),
    // Where each member serves /metrics when not on its client URL, by member name or id.
    metricsUrls: metricsUrlsSchema.optional(),
    kubeconfig: file.optional(),
    workloadKubeconfig: file.optional(),
    capiCluster: z.string().trim().min(1, 'must not be empty').optional(),
    namespace: z.string().trim().min(1, 'must not be empty').optional(),
    paths: z.array(z.string()).optional(),
    // Paths inside the etcd pods; checked with the flags' rules (access-rules.ts relaySettingsOf).
    relayBinary: z.string().optional(),
    relayTls: z.strictObject({ cacert: z.string().optional(), cert: z.string().optional(), key: z.string().optional() }).optional(),
  })
  // Also when another field is wrong, so one message names every problem.
  .superRefine(
    (cluster, ctx) => {
      if (cluster.endpoints === undefined && cluster.kubeconfig === undefined) {
        ctx.addIssue({ code: 'custom', path: ['endpoints'], message: 'is required, or kubeconfig to find the members through their etcd pods' });
      }
      if (cluster.paths !== undefined && cluster.policy?.pathOrder !== undefined)
        ctx.addIssue({ code: 'custom', path: ['paths'], message: 'give it or policy.pathOrder, not both' });
      if (cluster.auth?.password !== undefined) ctx.addIssue({ code: 'custom', path: ['auth', 'password'], message: passwordNotTaken(authWords('auth')) });
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  );

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|localhost|\[::1\]|::1)$/;

const listen = z.string().transform((text, ctx): Listen => {
  if (text.startsWith('unix:')) {
    const socket = text.slice('unix:'.length);
    if (socket === '') {
      ctx.addIssue({ code: 'custom', message: 'unix: needs a socket path, e.g. unix:/run/etcd-remediator/run.sock' });
      return z.NEVER;
    }
    return { kind: 'unix', path: socket };
  }
  const match = /^(.*):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || !LOOPBACK.test(match[1]!) || port > 65_535) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text)} is not a loopback host:port or unix:/path/to.sock (use e.g. 127.0.0.1:8787)` });
    return z.NEVER;
  }
  return { kind: 'tcp', host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port };
});

/** The shortest bearer token taken: 16 characters (e.g. `openssl rand -hex 32` gives 64). */
export const MIN_TOKEN_LENGTH = 16;

const configSchema = z
  .strictObject({
    state: z.string().min(1, 'must name a file'),
    snapshotDir: z.string().optional(),
    listen: listen.default({ kind: 'tcp', host: '127.0.0.1', port: 8787 }),
    token: z.string().optional(),
    tokenFile: file.optional(),
    insecureNoAuth: z.boolean().optional(),
    clusters: z.array(clusterSchema).min(1, 'must list at least one cluster'),
  })
  .superRefine((config, ctx) => {
    if (config.token !== undefined && config.tokenFile !== undefined)
      ctx.addIssue({ code: 'custom', path: ['tokenFile'], message: 'give it or token, not both' });
    if (config.insecureNoAuth === true && (config.token !== undefined || config.tokenFile !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['insecureNoAuth'], message: 'give it or a token, not both' });
    }
    // The value itself is never quoted back: it may be the real token, mistyped.
    if (config.token !== undefined && config.token.trim().length < MIN_TOKEN_LENGTH)
      ctx.addIssue({ code: 'custom', path: ['token'], message: `must be at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)` });
    const seen = new Set<string>();
    config.clusters.forEach((c, i) => {
      if (seen.has(c.clusterId))
        ctx.addIssue({ code: 'custom', path: ['clusters', i, 'clusterId'], message: `${JSON.stringify(c.clusterId)} is listed twice` });
      seen.add(c.clusterId);
    });
  });

export type Listen = { kind: 'tcp'; host: string; port: number } | { kind: 'unix'; path: string };

export interface RunConfig {
  statePath: string;
  /** Where snapshots before a removal go; undefined: snapshots/ beside the state file. */
  snapshotDir?: string;
  listen: Listen;
  /** The bearer token every HTTP request must carry; undefined when none is configured. */
  token?: string;
  /** Serve HTTP on a TCP port without a token: any local user may then trigger removals. */
  insecureNoAuth: boolean;
  /** Without their kube access: withKubeAccess reads it, from the management cluster where need be. */
  clusters: (ClusterEntry & { policy: Policy })[];
  /** Each kube cluster's access, by cluster id; rejects with a ConfigError naming the cluster and field. */
  kubeAccess: Map<string, () => Promise<KubeAccessConfig>>;
}

/**
 * A policy alone, written as in a config's cluster (`"grace": "60s"` or `graceMs`): what
 * `register --policy FILE` reads. Throws ConfigError naming the field as the user wrote it.
 */
export function policyInputFromConfig(raw: unknown): PolicyInput {
  const parsed = writtenPolicySchema.safeParse(raw, { error: plainWords });
  if (!parsed.success) throw new ConfigError(describeIssues(parsed.error.issues, '(policy)'));
  return parsed.data;
}

/** How a cluster's auth fields are named, under `prefix` (e.g. clusters[0].auth). */
const authWords = (prefix: string, resolve?: (file: string) => string): UserWords => ({
  user: `${prefix}.user`,
  passwordFile: `${prefix}.passwordFile`,
  ...(resolve ? { resolve } : {}),
  fail: (message) => new ConfigError(message),
});

function readAuth(dir: string, index: number, auth: { user: string; passwordFile?: string | undefined }): EtcdUser {
  const user = etcdUserFrom(
    auth,
    authWords(`clusters[${index}].auth`, (file) => path.resolve(dir, file)),
  );
  // A user is always given here, so etcdUserFrom returns one or throws.
  return user!;
}

function readTls(dir: string, index: number, tls: { cacert: string; cert?: string | undefined; key?: string | undefined }): TlsFiles {
  if ((tls.cert === undefined) !== (tls.key === undefined))
    throw new ConfigError(`clusters[${index}].tls.${tls.cert === undefined ? 'cert' : 'key'}: is required with ${tls.cert === undefined ? 'key' : 'cert'}`);
  return readTlsFiles(tls, {
    resolve: (file) => path.resolve(dir, file),
    name: (field, file) => `clusters[${index}].tls.${field} ${file}`,
    fail: (message) => new ConfigError(message),
  });
}

type ClusterConfig = z.infer<typeof clusterSchema>;

const FIELDS: Readonly<Record<Exclude<AccessField, 'paths'>, string>> = {
  endpoints: 'endpoints',
  kubeconfig: 'kubeconfig',
  workloadKubeconfig: 'workloadKubeconfig',
  capiCluster: 'capiCluster',
  namespace: 'namespace',
  relayBinary: 'relayBinary',
  relayCacert: 'relayTls.cacert',
  relayCert: 'relayTls.cert',
  relayKey: 'relayTls.key',
};

/** A cluster's fields as its problems name them: `clusters[0].kubeconfig (cluster prod)`. */
function configWords(index: number, cluster: ClusterConfig): AccessWords {
  const name = (field: AccessField) => (field === 'paths' ? (cluster.paths === undefined ? 'policy.pathOrder' : 'paths') : FIELDS[field]);
  return {
    where: (field) => `clusters[${index}].${name(field)} (cluster ${cluster.clusterId})`,
    ref: name,
    fail: (message) => new ConfigError(message),
  };
}

/** The config's clusters with their kube access, the workload kubeconfig Secrets read. */
export async function withKubeAccess(config: RunConfig): Promise<RunConfig['clusters']> {
  return Promise.all(
    config.clusters.map(async (c) => {
      const kube = config.kubeAccess.get(c.clusterId);
      return kube ? { ...c, kube: await kube() } : c;
    }),
  );
}

/** Reads and validates the config; paths inside it are relative to the file's directory. */
export function loadConfig(file: string): RunConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readInputText(file));
  } catch (error) {
    throw new ConfigError(error instanceof InputFileError ? error.message : `is not JSON: ${(error as Error).message}`);
  }
  const parsed = configSchema.safeParse(raw, { error: plainWords });
  if (!parsed.success) throw new ConfigError(describeIssues(parsed.error.issues, '(config)'));
  const dir = path.dirname(path.resolve(file));
  const config = parsed.data;
  const kubeAccess = new Map<string, () => Promise<KubeAccessConfig>>();
  const clusters = config.clusters.map((c, i) => {
    const words = configWords(i, c);
    const access = checkAccess(
      {
        hasEndpoints: c.endpoints !== undefined,
        kubeconfig: c.kubeconfig,
        workloadKubeconfig: c.workloadKubeconfig,
        capiCluster: c.capiCluster,
        namespace: c.namespace,
        paths: c.paths ?? c.policy?.pathOrder,
        relay: { binary: c.relayBinary, ...c.relayTls },
        baseDir: dir,
      },
      words,
    );
    const { kube } = access;
    if (kube) kubeAccess.set(c.clusterId, () => kubeAccessOf(kube, words));
    return {
      clusterId: c.clusterId,
      endpoints: c.endpoints ?? [],
      // Not held to the budget rule (step-budget-fit.ts): run's steps have no Lambda timeout to fit.
      policy: checkedPolicy({ ...c.policy, pathOrder: access.pathOrder }, (message) => new ConfigError(`clusters[${i}].${message}`)),
      ...(c.tls ? { tls: readTls(dir, i, c.tls) } : {}),
      ...(c.auth ? { auth: readAuth(dir, i, c.auth) } : {}),
      ...(c.aliases ? { aliases: c.aliases } : {}),
      ...(c.metricsUrls ? { metricsUrls: c.metricsUrls } : {}),
    };
  });
  const token = config.tokenFile === undefined ? config.token?.trim() : readTokenFile(path.resolve(dir, config.tokenFile), config.tokenFile);
  const where: Listen = config.listen.kind === 'unix' ? { kind: 'unix', path: path.resolve(dir, config.listen.path) } : config.listen;
  const snapshotDir =
    config.snapshotDir === undefined ? undefined : snapshotDirFrom(config.snapshotDir, dir, (problem) => new ConfigError(`snapshotDir: ${problem}`));
  return {
    statePath: path.resolve(dir, config.state),
    ...(snapshotDir ? { snapshotDir } : {}),
    listen: where,
    ...(token === undefined ? {} : { token }),
    insecureNoAuth: config.insecureNoAuth ?? false,
    clusters,
    kubeAccess,
  };
}

/**
 * The token in a file (surrounding whitespace dropped); a file others may read is refused. `where`
 * names it as its edge does (`tokenFile`, a flag), and `fail` is that edge's error.
 */
export function readTokenFile(
  file: string,
  asWritten: string,
  where = 'tokenFile',
  fail: (message: string) => Error = (message) => new ConfigError(message),
): string {
  let read: InputFile;
  try {
    read = readInputFile(file);
  } catch (error) {
    throw fail(`${where} ${asWritten}: ${error instanceof InputFileError ? error.message : `cannot read: ${(error as Error).message}`}`);
  }
  const { mode } = read.stat;
  if ((mode & 0o077) !== 0) throw fail(`${where} ${asWritten}: is readable or writable by others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`);
  const text = read.data.toString('utf8').trim();
  if (text.length < MIN_TOKEN_LENGTH)
    throw fail(`${where} ${asWritten}: the token must be at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32 > ${asWritten})`);
  return text;
}
