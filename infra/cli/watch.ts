// `watch`: the MachineHealthCheck external remediation service. Watches EtcdRemediationRequests
// in the management cluster and runs each through the embedded runtime, writing the outcome back
// to the request's status; a request deleted before removal began withdraws its incident.
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { incidentIdOf, isTerminalEvent } from '../../events/catalogue.ts';
import { defaultPolicy } from '../../functions/core/policy/index.ts';
import { type PathName, KUBE_PATHS } from '../../functions/core/common/index.ts';
import { systemClock } from '../../functions/lib/system-clock.ts';
import { capiClusterId, createCapiDirectory } from '../../functions/adapters/local/capi-directory.ts';
import { startRequestWatcher, type RequestWatcher } from '../kubernetes/request-watcher.ts';
import type { Log } from '../../functions/ports/log.ts';
import type { IncidentStore } from '../../functions/ports/incident-store.ts';
import { remoteSink } from './watch-remote.ts';
import { createLocalRuntime } from '../runtime/runtime.ts';
import { parseFlags, requiredFlag, UsageError } from './args.ts';
import { pathNamesOf, serverCredentials } from './access-rules.ts';
import { durationsFromFlags, policyFromFlags, relayFromFlags, relayHelp, relayOptions, tlsFromFlags } from './cluster-flags.ts';
import { escapeControls } from './control-chars.ts';
import { formatDuration } from './duration.ts';
import { healthAddrFlag, startHealthServer, type HealthAddress, type HealthServer } from './health.ts';
import { readInputText } from './input-file.ts';
import { readTokenFile } from './config.ts';
import { discoverMachineApi, machineApiFlag } from './machine-api.ts';
import { EXIT } from './output.ts';
import { showProgress } from './progress.ts';
import { resultOf } from './result.ts';
import { untilSignal } from './signals.ts';
import { incidentsIn, ownState } from './state.ts';

export const help = `usage: etcd-remediator watch (--kubeconfig F | --in-cluster) --state FILE [options]
       etcd-remediator watch (--kubeconfig F | --in-cluster) --bus NAME --table NAME [--region R]

Cluster API external remediation. Point a MachineHealthCheck's remediation template at an
EtcdRemediationRequestTemplate (infra/kubernetes/); for each unhealthy Machine, MHC creates an
EtcdRemediationRequest named after it, and this service:
  - reports it (target: the Machine) to the embedded runtime, for the cluster <namespace>/<cluster>
    its cluster-name label names, reached through the Secret <cluster>-kubeconfig there;
  - writes the incident's progress and outcome to the request's status (phase, reasonCode,
    message, incidentId, leaderMove, startedAt, updatedAt, completedAt) as it moves, with the
    conditions Ready, Remediated, Blocked and Paused (kubectl wait --for=condition=Remediated);
  - says each decision as a Kubernetes Event on the Machine (reason: the reason code; message:
    the sentence; kubectl describe machine NAME, kubectl get events);
  - withdraws the incident (REQUEST_WITHDRAWN) when the request is deleted before removal began.
A report that opened no incident within 60 s (every delivery failed, e.g. the kubeconfig Secret
unreadable: the runtime's log and dead letters say why) is reported again. A request whose member
recovered (phase Recovered) and that its MachineHealthCheck has not deleted 5 min later is
reported again: MHC still finds the Machine unhealthy, and its word stands. Nothing is reported
while Cluster API has stopped acting on the Machine (its Cluster paused by spec.paused or the
cluster.x-k8s.io/paused annotation, as during clusterctl move; its MachineHealthCheck or Machine
paused; or the MHC short-circuited, RemediationAllowed False): the request shows Pending with
reasonCode CLUSTER_PAUSED or REMEDIATION_NOT_ALLOWED, an incident of it not yet removing stops,
and it is reported once allowed. A request whose member another incident holds follows that one.
The watch lists, then follows from the list's resourceVersion, and relists on 410 Gone; open
incidents in FILE resume on start. SIGINT or SIGTERM stops it. Outcomes print as JSON lines.

With --bus and --table the requests go to a deployed stack instead: each is put on its EventBridge
bus as a MemberUnhealthy for cluster <namespace>/<cluster> (register the cluster under that id),
its incident is followed in the stack's table and written back to the request's status, and a
request deleted early withdraws the incident there. The stack's cluster policy applies.

  --kubeconfig F           the management cluster's kubeconfig
  --in-cluster             the pod's own service account (the Deployment in infra/kubernetes/)
  --state FILE             the state file (required)
  --paths LIST             path order: port-forward, exec-relay, direct (default port-forward,exec-relay)
  --grace DUR              how long an unreachable leader is waited for (default ${formatDuration(defaultPolicy.graceMs)})
  --timeout DUR            deadline of each etcd call (default ${formatDuration(defaultPolicy.callTimeoutMs)})
  --election-timeout DUR   the clusters' --election-timeout (default ${formatDuration(defaultPolicy.electionTimeoutMs)})
  --cacert F --cert F --key F   etcd client TLS for the port-forward path of every cluster, instead of
                           the certificate minted for each cluster from its etcd CA, the Secret
                           <cluster>-etcd (keys tls.crt, tls.key) in the Cluster's namespace
                           (the exec relay uses the pod's own; the --relay flags, for every
                           cluster, say where they are)
${relayHelp}
  --machine-api VERSION    Cluster API version the Machines, Clusters and MachineHealthChecks are
                           read in: v1beta2 or v1beta1 (default: v1beta2 where the management
                           cluster serves it, as from Cluster API v1.11; v1beta1 otherwise)
  --workload-kubeconfig-secret NAME   read each workload cluster's kubeconfig from the Secret NAME
                           ({cluster} stands for the cluster's name; key "value") in the Cluster's
                           namespace instead of Cluster API's admin <cluster>-kubeconfig: e.g. a
                           kubeconfig of the etcd-remediator ServiceAccount that
                           infra/kubernetes/workload-rbac.yaml creates and binds
  --bus NAME --table NAME  report to a deployed stack's bus and follow its incident table
  --region R               the AWS region with --bus (default: AWS_REGION or the AWS config)
  --health-addr [HOST:]PORT   serve GET /healthz (alive, event loop turning) and /readyz (the
                           request watch has listed and is watching; the state store answers) for
                           the kubelet's probes; on 127.0.0.1 unless HOST is given (0.0.0.0 in a pod)
  --metrics-token-file F   also serve GET /metrics there (Prometheus text format; README "Metrics"),
                           to a scrape that sends Authorization: Bearer <the token in F> (a file
                           only its owner can read, at least 16 characters); the probes need none`;

const options = {
  kubeconfig: { type: 'string' },
  'in-cluster': { type: 'boolean' },
  state: { type: 'string' },
  paths: { type: 'string' },
  grace: { type: 'string' },
  timeout: { type: 'string' },
  'election-timeout': { type: 'string' },
  cacert: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  'machine-api': { type: 'string' },
  'workload-kubeconfig-secret': { type: 'string' },
  bus: { type: 'string' },
  table: { type: 'string' },
  region: { type: 'string' },
  'health-addr': { type: 'string' },
  'metrics-token-file': { type: 'string' },
  ...relayOptions,
} as const;

const said =
  (prefix: string) =>
  (message: string, ...extra: Record<string, unknown>[]) =>
    // JSON escapes C0 but not DEL, C1 or bidi marks; escaped as \u…, the line's JSON stays JSON.
    void process.stderr.write(`${escapeControls(`${prefix}${message} ${JSON.stringify(Object.assign({}, ...extra))}`)}\n`);
const stderrLog: Log = { debug: () => undefined, info: said(''), warn: said('warning: '), error: said('error: ') };

/** `--paths a,b`: the same names and rules as every command's. */
export const pathsFlag = (value: string | undefined): PathName[] | undefined =>
  value === undefined
    ? undefined
    : pathNamesOf(
        value
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean),
        '--paths',
        (message) => new UsageError(message),
      );

function managementFrom(values: { kubeconfig?: string | undefined; 'in-cluster'?: boolean | undefined }): {
  config: KubeConfig;
  source: string | { inCluster: true };
} {
  if ((values.kubeconfig === undefined) === !values['in-cluster']) throw new UsageError('give one of --kubeconfig F (the management cluster) and --in-cluster');
  const config = new KubeConfig();
  if (values['in-cluster']) {
    try {
      config.loadFromCluster();
    } catch (error) {
      throw new UsageError(`--in-cluster: no service account here (${error instanceof Error ? error.message : String(error)})`);
    }
    return { config, source: { inCluster: true } };
  }
  let text: string;
  try {
    text = readInputText(values.kubeconfig!);
    config.loadFromString(text);
  } catch (error) {
    throw new UsageError(`--kubeconfig: cannot use ${values.kubeconfig}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const leaky = serverCredentials(config);
  if (leaky) throw new UsageError(`--kubeconfig: ${values.kubeconfig}: ${leaky}`);
  return { config, source: text };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags('watch', argv, options);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  const management = managementFrom(values);
  const healthAt = healthAddrFlag(values['health-addr']);
  if (values.bus !== undefined || values.table !== undefined) return watchRemote(values, management.config, healthAt);
  const metricsToken = metricsTokenFlag(values['metrics-token-file'], healthAt);
  const statePath = requiredFlag('state', values.state, 'watch.sqlite');
  const askedMachineApi = machineApiFlag(values['machine-api']);
  const tls = tlsFromFlags(values);
  const workloadSecret = workloadSecretFlag(values['workload-kubeconfig-secret']);
  // A request names no client URLs: the kube paths only, unless --paths says otherwise.
  const policy = policyFromFlags({ pathOrder: pathsFlag(values.paths) ?? [...KUBE_PATHS], ...durationsFromFlags(values) });
  if (policy.pathOrder.includes('direct'))
    throw new UsageError('--paths: direct needs client URLs, which a MachineHealthCheck request does not give; use port-forward and exec-relay');
  const relay = relayFromFlags(values, policy.pathOrder);

  const ownership = ownState(statePath);
  const signal = untilSignal();
  const health = healthAt && (await startHealth(healthAt, metricsToken));
  try {
    const machineApi = await discoverMachineApi(management.config, askedMachineApi, signal.promise);
    if (!machineApi) return EXIT.ok;
    const open = (await incidentsIn(statePath)).filter((i) => i.state === 'open');
    const runtime = await createLocalRuntime({
      statePath,
      directory: createCapiDirectory({
        management: management.config,
        managementSource: management.source,
        policy,
        machineApiVersion: machineApi,
        ...(tls ? { tls } : {}),
        ...(workloadSecret ? { workloadKubeconfigSecret: workloadSecret } : {}),
        relay,
      }),
      logLevel: 'SILENT',
      onHandlerError: (fn, error) => process.stderr.write(`${escapeControls(`${fn} failed: ${error instanceof Error ? error.message : String(error)}`)}\n`),
      // Stuck learners are looked for outside incidents too: a join that failed with none open.
      learnerChecks: true,
      hygieneChecks: true,
      maintenanceChecks: true,
      resume: { incidentIds: open.map((i) => i.incidentId) },
      metrics: metricsToken !== undefined,
    });
    if (health && runtime.metrics && metricsToken !== undefined) health.serveMetrics(runtime.metrics, metricsToken);
    const unsubscribe = runtime.bus.subscribe((event) => {
      if (!isTerminalEvent(event)) return;
      resultOf(runtime.store, event).then(
        (result) => void process.stdout.write(`${JSON.stringify(result)}\n`),
        (error: unknown) => void process.stderr.write(`${escapeControls(`cannot report incident ${event.detail.incidentId}: ${String(error)}`)}\n`),
      );
    });
    const progress = showProgress(runtime.bus.subscribe, {
      start: Date.now(),
      spinner: false,
      prefix: (e) => `${e.detail.clusterId}/${(incidentIdOf(e) ?? 'new').slice(0, 8)} `,
    });
    await runtime.start();
    const watcher = startRequestWatcher({
      management: management.config,
      runtime: {
        ...runtime,
        clock: systemClock,
        submit: (detail, source) => runtime.submit(detail, source),
        subscribe: (observer) => runtime.bus.subscribe(observer),
      },
      clusterIdOf: (request) => capiClusterId(request.namespace, request.clusterName ?? ''),
      log: stderrLog,
      // Clusters, MachineHealthChecks and Machines, read for whether Cluster API lets a Machine be remediated.
      clusterApiVersion: machineApi,
    });
    health?.setReadiness(async () => watcher.notWatching() ?? (await storeAnswers(runtime.store)));
    try {
      return await watchUntilSignal(watcher, signal, `state ${statePath}; paths ${policy.pathOrder.join(',')}; Cluster API ${machineApi}`);
    } finally {
      await watcher.stop();
      await runtime.scheduler.stop();
      await runtime.bus.drain({ timeoutMs: 30_000 }).catch(() => undefined);
      progress.stop();
      unsubscribe();
      await runtime.stop();
    }
  } finally {
    await health?.close();
    signal.dispose();
    ownership.release();
  }
}

/** `--metrics-token-file F`: the token /metrics asks for, on the --health-addr listener. */
function metricsTokenFlag(file: string | undefined, healthAt: HealthAddress | undefined): string | undefined {
  if (file === undefined) return undefined;
  if (!healthAt) throw new UsageError('--metrics-token-file: needs --health-addr, the listener /metrics is served on');
  return readTokenFile(file, file, '--metrics-token-file', (message) => new UsageError(message));
}

async function startHealth(at: HealthAddress, metricsToken?: string): Promise<HealthServer> {
  const health = await startHealthServer(at, metricsToken);
  process.stderr.write(`health on ${health.url}: GET /healthz, /readyz\n`);
  return health;
}

/** A point read: the store is open and answers. */
const storeAnswers = (store: IncidentStore): Promise<string | undefined> =>
  store.getIncident('readyz').then(
    () => undefined,
    (error: unknown) => `the state store did not answer: ${error instanceof Error ? error.message : String(error)}`,
  );

/** How often a watch not listed yet is looked at again, to say so once it is. */
const LISTED_POLL_MS = 250;

/**
 * Runs until SIGINT or SIGTERM. Says it is watching only once a list of requests came back (the
 * informer's start resolves even when its list failed); until then, why not and that it keeps trying.
 */
async function watchUntilSignal(watcher: RequestWatcher, signal: ReturnType<typeof untilSignal>, where: string): Promise<number> {
  // Between a refused list and the informer's next try only its unref'd timer is left: the service holds itself up.
  const alive = setInterval(() => undefined, 60_000);
  let signalled = false;
  void signal.promise.then(() => (signalled = true));
  try {
    await Promise.race([watcher.ready, signal.promise]);
    const why = signalled ? undefined : watcher.notWatching();
    // The watcher's reason may already say it starts again; the line says it once.
    const reason = why?.replace(/; starting it again$/, '');
    if (reason !== undefined)
      process.stderr.write(`${escapeControls(`not watching EtcdRemediationRequests yet: ${reason}; it keeps trying until a list comes back`)}\n`);
    while (!signalled && watcher.notWatching() !== undefined) await Promise.race([sleep(LISTED_POLL_MS), signal.promise]);
    if (!signalled) process.stderr.write(`watching EtcdRemediationRequests; ${where}\n`);
    const got = await signal.promise;
    process.stderr.write(`${got}: stopping\n`);
    return EXIT.ok;
  } finally {
    clearInterval(alive);
  }
}

/**
 * `--workload-kubeconfig-secret NAME`: the Secret name of each cluster, `{cluster}` standing for
 * the cluster's name; a name without it would give every cluster the same kubeconfig.
 */
export function workloadSecretFlag(value: string | undefined): ((clusterName: string) => string) | undefined {
  if (value === undefined) return undefined;
  const example = 'e.g. {cluster}-etcd-remediator-kubeconfig';
  if (value.split('{cluster}').length !== 2)
    throw new UsageError(`--workload-kubeconfig-secret: ${JSON.stringify(value)} must name each cluster's own Secret with {cluster} once (${example})`);
  // A Secret's name is a DNS subdomain: lower-case letters, digits, '-' and '.'.
  if (!/^[a-z0-9.-]*$/.test(value.replace('{cluster}', '')))
    throw new UsageError(
      `--workload-kubeconfig-secret: ${JSON.stringify(value)} is not a Secret name: lower-case letters, digits, '-' and '.' around {cluster} (${example})`,
    );
  return (clusterName) => value.replace('{cluster}', clusterName);
}

/** The local policy flags mean nothing to a deployed stack: its registered policy applies. */
const LOCAL_ONLY = [
  'state',
  'paths',
  'grace',
  'timeout',
  'election-timeout',
  'cacert',
  'cert',
  'key',
  'machine-api',
  'workload-kubeconfig-secret',
  ...(Object.keys(relayOptions) as (keyof typeof relayOptions)[]),
] as const;

async function watchRemote(
  values: Partial<Record<keyof typeof options, string | boolean>>,
  management: KubeConfig,
  healthAt: HealthAddress | undefined,
): Promise<number> {
  const busName = requiredFlag('bus', values.bus as string | undefined, 'etcd-remediator');
  const tableName = requiredFlag('table', values.table as string | undefined, 'etcd-remediator-incidents');
  if (values['metrics-token-file'] !== undefined)
    throw new UsageError("--metrics-token-file: not with --bus; a deployed stack's metrics are its CloudWatch metrics (namespace EtcdRemediator)");
  const local = LOCAL_ONLY.find((flag) => values[flag] !== undefined);
  if (local) throw new UsageError(`--${local}: not with --bus; the stack's registered cluster policy applies (etcd-remediator register)`);
  const sink = remoteSink({ busName, tableName, ...(typeof values.region === 'string' ? { region: values.region } : {}) });
  const signal = untilSignal();
  const health = healthAt && (await startHealth(healthAt));
  try {
    const machineApi = await discoverMachineApi(management, undefined, signal.promise);
    if (!machineApi) return EXIT.ok;
    const watcher = startRequestWatcher({
      management,
      clusterApiVersion: machineApi,
      runtime: sink,
      clusterIdOf: (request) => capiClusterId(request.namespace, request.clusterName ?? ''),
      log: stderrLog,
      followIntervalMs: 2_000,
    });
    health?.setReadiness(async () => watcher.notWatching() ?? (await storeAnswers(sink.store)));
    try {
      return await watchUntilSignal(watcher, signal, `reporting to bus ${busName}, following table ${tableName}; Cluster API ${machineApi}`);
    } finally {
      await watcher.stop();
    }
  } finally {
    await health?.close();
    sink.close();
    signal.dispose();
  }
}
