// `run`: the long-running local service. Takes MemberUnhealthy by HTTP POST on a loopback port and
// as JSON lines on stdin, runs each through the pipeline, and prints one JSON line per outcome.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { incidentIdOf, isTerminalEvent } from '../../events/catalogue.ts';
import { createLocalRuntime, type LocalRuntime } from '../runtime/runtime.ts';
import { createStaticDirectory } from '../../functions/adapters/local/static-directory.ts';
import { parseFlags, PROGRAM, requiredFlag, UsageError } from './args.ts';
import { cliLogLevel } from './log-level.ts';
import { bearerCheck, listenOnSocket, prepareSocket } from './run-listen.ts';
import { ConfigError, loadConfig, withKubeAccess, type RunConfig } from './config.ts';
import { escapeControls } from './control-chars.ts';
import { createIntake, refuseTooLarge, type IntakeReply, type Refusal } from './intake.ts';
import { splitLines } from './lines.ts';
import { EXIT } from './output.ts';
import { showProgress } from './progress.ts';
import { resultOf } from './result.ts';
import { drainIncidents } from './run-drain.ts';
import { replyHealth, replyMetrics, storeHealth } from './service-routes.ts';
import type { PrometheusMetrics } from '../runtime/prometheus-metrics.ts';
import { untilSignal } from './signals.ts';
import { incidentLabel, incidentsIn, ownState } from './state.ts';

export const help = `usage: etcd-remediator run --config FILE

The local service for the clusters in FILE. Takes MemberUnhealthy events
  - by HTTP: POST /events with the detail as JSON ("at" defaults to the time received); 202 {"accepted":true,"incidentId",…} when
    accepted, 400 {"error","field","deadLetterId"} naming the field when invalid, 409 (same shape) when its
    incidentId names an incident that is closed or is another target's, 413 {"error","limitBytes",…}
    when the body is over 1 MiB;
  - on stdin: one detail as JSON per line, each line at most 1 MiB;
runs each through the pipeline, and prints one JSON line per outcome (awaiting-replacement, then
completed once the replacement joins; blocked, closed, failed) to stdout. Progress and refusals go
to stderr. Refused inputs are kept as dead letters (etcd-remediator status --state FILE --dead-letters). SIGINT or SIGTERM stops it cleanly; open
incidents resume on the next start: run resumes every open incident of its clusters, and names
them on stderr as it starts, and as it stops. One process owns a state file at a time: a second
gets exit 2.
When stdin is its only input (no HTTP), the end of stdin is the end of the input: run finishes
the incidents it accepted and resumed, then exits 0, or 2 if a line was refused (at once when it
took nothing); it stops waiting at their deadline (plus a minute) and names those still open.
The same listener serves GET /metrics (Prometheus text format; the token or the socket's owner, as
/events; README "Metrics" lists the series) and GET /healthz (no token: 200 ok while the state
file takes writes and answers a read, 503 with the reason otherwise).

FILE (JSON; paths are relative to it):
  { "state": "state.sqlite", "listen": "127.0.0.1:8787", "tokenFile": "run.token",
    "clusters": [{ "clusterId": "prod", "endpoints": ["https://10.0.0.1:2379"],
                   "tls": { "cacert": "ca.pem", "cert": "client.pem", "key": "client-key.pem" },
                   "policy": { "grace": "60s", "electionTimeout": "1s", "callTimeout": "2s",
                               "backoff": { "base": "5s", "cap": "5m" },
                               "allowRemoveWithoutLeaderMove": true, "maxAttempts": 10 } }] }
  snapshotDir: where the snapshot taken before each removal goes, as
    <snapshotDir>/<cluster>/<incident>-<member>.db (default: snapshots/ beside the state file).
  listen: a loopback host:port (port 0 picks a free port, printed on stderr), or unix:PATH for a
    Unix socket only this user can open (mode 0600; refused if PATH exists and is not a stale
    socket of ours). Default 127.0.0.1:8787.
  token or tokenFile (a file only its owner can read; at least 16 characters, e.g. from
    openssl rand -hex 32): every HTTP request must send Authorization: Bearer <token>, else 401.
    A TCP port is opened only with a token or "insecureNoAuth": true (any local user could post
    removals); without either, run takes events on stdin only (and refuses to start on a terminal).
  A cluster's auth, for etcd with authentication enabled: { "user": "root", "passwordFile": "etcd.password" },
    the password file holding the one line (mode 600), or ETCDCTL_PASSWORD holding it; never
    the password itself. Removing a member needs a user with etcd's root role.
  metricsUrls: where each member serves /metrics for leader hygiene when not on its client URL
    (etcd's --listen-metrics-urls; kubeadm's is http://127.0.0.1:2381), by member name or id:
    "metricsUrls": { "etcd-1": "http://10.0.0.1:2381", "8e9e05c52164694d": "http://10.0.0.2:2381" };
    absolute http or https URLs, /metrics added unless one names a path; https with the cluster's tls.
  A cluster reached through Kubernetes (as probe's --kubeconfig, --cluster, --namespace,
  --workload-kubeconfig and --paths):
    { "clusterId": "prod", "kubeconfig": "management.kubeconfig", "capiCluster": "prod",
      "namespace": "clusters", "paths": ["direct", "port-forward", "exec-relay"] }
  kubeconfig: with capiCluster (the Cluster API Cluster's name; written out even when it is
    the clusterId, so no kubeconfig is taken for the wrong cluster's), the management cluster's:
    the workload kubeconfig is read as the service starts from Secret <capiCluster>-kubeconfig
    (key value) in namespace (default: default), or given as workloadKubeconfig; the cluster's
    Machines there are read and replaced. Without capiCluster, the workload cluster's own (etcd
    pods and Nodes, no Machines). With kubeconfig, endpoints is optional: the members are found
    through their etcd pods. Each decision is also a Kubernetes Event: on the target's Machine with
    capiCluster, else on its Node (the Event in namespace default).
  paths (or policy.pathOrder, not both): direct, port-forward, exec-relay, in the order tried;
    default direct with endpoints, then port-forward and exec-relay with kubeconfig.
  relayBinary and relayTls (as probe's --relay-binary, --relay-cacert, --relay-cert and
    --relay-key; with kubeconfig, and exec-relay among the paths): absolute paths inside the etcd
    pods, for an image or a cluster that keeps them elsewhere than kubeadm, e.g.
      "relayBinary": "/opt/etcd/bin/etcdctl",
      "relayTls": { "cacert": "/etc/etcd/pki/ca.crt", "cert": "/etc/etcd/pki/client.crt", "key": "/etc/etcd/pki/client.key" }
    relayTls takes all three. Default: kubeadm's /usr/local/bin/etcdctl and
    /etc/kubernetes/pki/etcd/ca.crt, healthcheck-client.crt and healthcheck-client.key.
  policy durations ("60s", "1h30m", or milliseconds as <name>Ms): grace, electionTimeout,
    callTimeout, incidentDeadline, retryPeriod, minHealthyPeriod, snapshotTimeout,
    actuatorTimeout, lockLease, backoff.base, backoff.cap; and allowRemoveWithoutLeaderMove,
    closeWhenRecovered, maxAttempts, maxRetry, pathOrder, maxImmediateReprobes, dryRun,
    snapshotBeforeRemove (default true), snapshotRequired (default true: a snapshot that fails
    blocks the removal; false: the removal goes on without one),
    allowShrink, guardPrefix (where in etcd the lock and the removal record live), singleRemediator
    (true only when this state is the cluster's one remediator: the lock and record then stay in it).

  --config FILE   the config file (required)`;

/** The most one input may be, as an HTTP body or a stdin line. */
const MAX_INPUT_BYTES = 1 << 20;

type Body = { text: string } | { tooLargeBytes: number };

/** One line of the log on stderr; what it quotes (reports, targets, errors) is escaped, so it stays one line. */
const logLine = (text: string): void => void process.stderr.write(`${escapeControls(text)}\n`);

function readBody(req: http.IncomingMessage): Promise<Body> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit the rest is read and dropped, so the client gets an answer rather than a reset.
      if (size <= MAX_INPUT_BYTES) chunks.push(chunk);
      else chunks = [];
    });
    req.on('end', () => resolve(size > MAX_INPUT_BYTES ? { tooLargeBytes: size } : { text: Buffer.concat(chunks).toString('utf8') }));
    req.on('error', reject);
  });
}

type Intake = (text: string, source: string) => Promise<IntakeReply>;
type TooLarge = (source: string, field: '(body)' | '(line)', sizeBytes: number) => Promise<Refusal>;

const peerOf = (req: http.IncomingMessage): string =>
  req.socket.remoteAddress === undefined ? 'the socket' : `${req.socket.remoteAddress}:${req.socket.remotePort ?? '?'}`;

/** What the listener serves beside /events. */
interface Served {
  metrics: PrometheusMetrics;
  health: () => Promise<string | undefined>;
}

async function serve(config: RunConfig, intake: Intake, tooLarge: TooLarge, served: Served): Promise<http.Server> {
  const authorized = config.token === undefined ? undefined : bearerCheck(config.token);
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(`${JSON.stringify(body)}\n`);
    };
    const url = new URL(req.url ?? '/', 'http://localhost');
    // Before the token: a probe cannot send one, and ok or why not is all it says.
    if (url.pathname === '/healthz') return void replyHealth(req, res, served.health);
    const auth = authorized?.(req) ?? 'ok';
    if (auth !== 'ok') {
      // Said without the token, and not kept as a dead letter: who is not allowed in cannot fill the state file.
      logLine(`refused ${req.method ?? '?'} ${url.pathname} from ${peerOf(req)}: ${auth === 'missing' ? 'no bearer token' : 'wrong bearer token'}`);
      return reply(
        401,
        { error: `${auth === 'missing' ? 'no bearer token' : 'wrong bearer token'}: send Authorization: Bearer <the token of the run config>` },
        { 'www-authenticate': 'Bearer' },
      );
    }
    if (url.pathname === '/metrics')
      return req.method === 'GET' || req.method === 'HEAD' ? void replyMetrics(res, served.metrics) : reply(405, { error: 'use GET' });
    if (url.pathname !== '/events')
      return reply(404, { error: `no such path ${url.pathname}; POST MemberUnhealthy details to /events, GET /metrics or /healthz` });
    if (req.method !== 'POST') return reply(405, { error: 'use POST' });
    readBody(req)
      .then(async (body) => {
        if ('tooLargeBytes' in body) return reply(413, { ...(await tooLarge('http', '(body)', body.tooLargeBytes)), limitBytes: MAX_INPUT_BYTES });
        const result = await intake(body.text, 'http');
        return reply(result.accepted ? 202 : result.conflict ? 409 : 400, result);
      })
      .catch((error: unknown) => reply(500, { error: error instanceof Error ? error.message : String(error) }));
  });
  const { listen } = config;
  if (listen.kind === 'unix') {
    await prepareSocket(listen.path);
    await listenOnSocket(server, listen.path);
    return server;
  }
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: listen.host, port: listen.port }, () => resolve(server));
  });
}

/** Why `run` will not open its TCP port, or undefined when it may. */
export function unauthenticatedPort(config: RunConfig): string | undefined {
  if (config.listen.kind !== 'tcp' || config.token !== undefined || config.insecureNoAuth) return undefined;
  return `not listening on ${config.listen.host}:${config.listen.port}: without a token any local user could post to it and trigger removals; set "token" or "tokenFile" in the config (clients send Authorization: Bearer <token>), listen on "unix:/path/to.sock", or set "insecureNoAuth": true`;
}

function listenUrl(server: http.Server): string {
  const address = server.address();
  if (typeof address === 'string') return `unix:${address} POST /events`;
  const { address: ip, port } = address as AddressInfo;
  return `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}/events`;
}

/** What stdin brought, once it ended and every line was answered. */
interface StdinEnd {
  lines: number;
  /** Incident ids accepted (opened or joined), in order. */
  accepted: string[];
  refused: number;
  /** Lines whose intake failed (the state file, say): neither accepted nor refused. */
  failed: number;
}

/** Reads JSON lines from stdin until it ends; returns how to stop reading, and its end. */
function readStdin(intake: Intake, tooLarge: TooLarge): { stop(): void; ended: Promise<StdinEnd> } | undefined {
  if (process.stdin.isTTY) return undefined;
  let n = 0;
  const end: StdinEnd = { lines: 0, accepted: [], refused: 0, failed: 0 };
  const replies: Promise<void>[] = [];
  const say = (at: number, r: IntakeReply) => {
    if (r.accepted) end.accepted.push(r.incidentId);
    else end.refused++;
    logLine(r.accepted ? `stdin line ${at}: accepted, incident ${r.incidentId}${r.joined ? ' (joined)' : ''}` : `stdin line ${at}: refused: ${r.error}`);
  };
  const lines = splitLines(MAX_INPUT_BYTES, (event) => {
    n += 1;
    const at = n;
    if ('line' in event && event.line.trim() === '') return;
    end.lines++;
    const reply = 'line' in event ? intake(event.line, 'stdin') : tooLarge('stdin', '(line)', event.tooLongBytes);
    replies.push(
      reply
        .then((r) => say(at, r))
        .catch((error: unknown) => {
          end.failed++;
          logLine(`stdin line ${at}: ${error instanceof Error ? error.message : String(error)}`);
        }),
    );
  });
  let ended: () => void = () => undefined;
  const endOfInput = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const onData = (chunk: Buffer) => lines.push(chunk);
  const onEnd = () => {
    lines.end();
    ended();
  };
  process.stdin.on('data', onData);
  process.stdin.on('end', onEnd);
  return {
    stop() {
      process.stdin.off('data', onData);
      process.stdin.off('end', onEnd);
    },
    // Every line is answered before the end counts: an accepted report is then on the bus.
    ended: endOfInput.then(() => Promise.all(replies)).then(() => end),
  };
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "; 1 line refused (…)": what a refused or failed line means for the exit, or nothing. */
function linesNotTaken(end: StdinEnd, statePath: string): string {
  const refused =
    end.refused > 0 ? `; ${plural(end.refused, 'line')} refused (kept as dead letters: ${PROGRAM} status --state ${statePath} --dead-letters)` : '';
  return `${refused}${end.failed > 0 ? `; ${plural(end.failed, 'line')} not taken (see above)` : ''}`;
}

const exitOf = (end: StdinEnd): number => (end.failed > 0 ? EXIT.error : end.refused > 0 ? EXIT.usage : EXIT.ok);

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags('run', argv, { config: { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  const file = requiredFlag('config', values.config, 'etcd-remediator.json');
  let config: RunConfig;
  try {
    const loaded = loadConfig(file);
    config = { ...loaded, clusters: await withKubeAccess(loaded) };
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`${file}: ${error.message}`);
    throw error;
  }

  // Without a way to tell who posts, the port stays closed; stdin (only this process's parent can write it) still serves.
  const closed = unauthenticatedPort(config);
  if (closed !== undefined && process.stdin.isTTY) throw new UsageError(`${file}: ${closed}`);

  const ownership = ownState(config.statePath);
  try {
    return await serveConfig(config);
  } finally {
    ownership.release();
  }
}

/** Every open incident of a configured cluster; says which it resumes, and which it cannot. */
async function toResume(config: RunConfig): Promise<string[]> {
  const open = (await incidentsIn(config.statePath)).filter((i) => i.state === 'open');
  const known = new Set(config.clusters.map((c) => c.clusterId));
  const resumed = open.filter((i) => known.has(i.clusterId));
  const n = resumed.length;
  logLine(n === 0 ? 'no open incidents to resume' : `resuming ${n} open incident${n === 1 ? '' : 's'}: ${resumed.map(incidentLabel).join(', ')}`);
  for (const i of open.filter((o) => !known.has(o.clusterId))) logLine(`not resuming ${i.incidentId} (cluster ${i.clusterId} is not in the config)`);
  return resumed.map((i) => i.incidentId);
}

async function serveConfig(config: RunConfig): Promise<number> {
  const signal = untilSignal();
  const start = Date.now();
  const resumed = await toResume(config);
  const runtime = await createLocalRuntime({
    statePath: config.statePath,
    ...(config.snapshotDir ? { snapshotDir: config.snapshotDir } : {}),
    directory: createStaticDirectory(config.clusters),
    logLevel: cliLogLevel(),
    onHandlerError: (fn, error) => logLine(`${fn} failed: ${error instanceof Error ? error.message : String(error)}`),
    // Every incident it can run; one of a cluster it has no endpoints for would only fail.
    // Stuck learners are looked for outside incidents too: a join that failed with none open.
    learnerChecks: true,
    hygieneChecks: true,
    maintenanceChecks: true,
    resume: { incidentIds: resumed },
    metrics: true,
  });
  // This state file's fleet is run's configuration: the storm guard counts it, whichever command asks.
  await runtime.store.noteFleet(
    config.clusters.map((c) => c.clusterId),
    { replace: true },
  );
  // Through Kubernetes, each decision is also an Event on the target's Node (or Machine).
  // Through Kubernetes, each decision is also an Event on its object; the client is loaded only for that.
  const objectEvents = config.clusters.some((c) => c.kube)
    ? (await import('../kubernetes/incident-object-events.ts')).startIncidentObjectEvents({
        subscribe: runtime.bus.subscribe,
        store: runtime.store,
        clusters: config.clusters,
        say: logLine,
      })
    : undefined;
  const pending = new Set<Promise<void>>();
  const unsubscribe = runtime.bus.subscribe((event) => {
    if (!isTerminalEvent(event)) return;
    const output = resultOf(runtime.store, event)
      .then((result) => void process.stdout.write(`${JSON.stringify(result)}\n`))
      .catch((error: unknown) => logLine(`cannot report incident ${event.detail.incidentId}: ${String(error)}`))
      .finally(() => pending.delete(output));
    pending.add(output);
  });
  const progress = showProgress(runtime.bus.subscribe, {
    start,
    spinner: false,
    prefix: (e) => `${e.detail.clusterId}/${(incidentIdOf(e) ?? 'new').slice(0, 8)} `,
  });
  let server: http.Server | undefined;
  let stdin: ReturnType<typeof readStdin>;
  try {
    await runtime.start();
    const intake = createIntake(
      runtime,
      config.clusters.map((c) => c.clusterId),
    );
    const tooLarge: TooLarge = (source, field, sizeBytes) => refuseTooLarge(runtime, source, field, sizeBytes, MAX_INPUT_BYTES);
    const where = escapeControls(`state ${config.statePath}; clusters ${config.clusters.map((c) => c.clusterId).join(', ')}`);
    const closed = unauthenticatedPort(config);
    if (closed === undefined) {
      server = await serve(config, intake, tooLarge, { metrics: runtime.metrics!, health: () => storeHealth(runtime.store) });
      const auth = config.token === undefined ? (config.listen.kind === 'unix' ? 'owner only' : 'no auth (insecureNoAuth)') : 'bearer token';
      process.stderr.write(`listening on ${listenUrl(server)}; ${where}; ${auth}\n`);
    } else {
      process.stderr.write(`${closed}\nlistening on stdin only; ${where}\n`);
    }
    stdin = readStdin(intake, tooLarge);
    const listening = server;
    if (listening) void stdin?.ended.then((end) => end.lines > 0 && logLine(`stdin ended; still taking events on ${listenUrl(listening)}`));
    // With no HTTP, the end of stdin is the end of the input.
    const inputEnd = listening === undefined ? stdin?.ended : undefined;
    const got = await Promise.race([signal.promise, ...(inputEnd ? [inputEnd] : [])]);
    if (typeof got === 'string') {
      logLine(`${got}: stopping`);
      return EXIT.ok;
    }
    return await finishInput(runtime, config, [...new Set([...resumed, ...got.accepted])], got, signal.promise);
  } finally {
    stdin?.stop();
    process.stdin.destroy();
    if (server) {
      const closing = new Promise((resolve) => server!.close(resolve));
      server.closeAllConnections();
      await closing;
    }
    // Let the work under way finish and be reported before the store closes.
    await runtime.scheduler.stop();
    await runtime.bus.drain({ timeoutMs: 30_000 }).catch(() => undefined);
    await Promise.allSettled([...pending]);
    progress.stop();
    unsubscribe();
    await objectEvents?.stop();
    await sayStillOpen(runtime, config);
    await runtime.stop();
    signal.dispose();
  }
}

/** stdin ended and was the only input: the incidents taken are finished, then run exits. */
async function finishInput(runtime: LocalRuntime, config: RunConfig, incidentIds: string[], end: StdinEnd, signal: Promise<NodeJS.Signals>): Promise<number> {
  const notTaken = linesNotTaken(end, config.statePath);
  if (incidentIds.length === 0) {
    logLine(`stdin ended with nothing accepted${notTaken}; exiting`);
    return exitOf(end);
  }
  logLine(`stdin ended: waiting for ${plural(incidentIds.length, 'incident')} to finish: ${incidentIds.join(', ')}`);
  const deadlines = new Map(config.clusters.map((c) => [c.clusterId, c.policy.incidentDeadlineMs]));
  const drained = await drainIncidents(runtime, incidentIds, { deadlineMs: (clusterId) => deadlines.get(clusterId) ?? 0, signal });
  if (drained.kind === 'signal') {
    logLine(`${drained.signal}: stopping`);
    return EXIT.ok;
  }
  if (drained.kind === 'bound') {
    logLine(
      `stdin ended: stopped waiting, ${plural(drained.open.length, 'incident')} still open past ${drained.open.length === 1 ? 'its' : 'their'} deadline${notTaken}; exiting`,
    );
    return exitOf(end);
  }
  for (const id of drained.neverOpened)
    logLine(`incident ${id} was accepted but never opened (${PROGRAM} status --state ${config.statePath} --dead-letters says why)`);
  logLine(`stdin ended: ${plural(drained.finished, 'incident')} finished${notTaken}; exiting`);
  return drained.neverOpened.length > 0 ? EXIT.error : exitOf(end);
}

/** As it stops: each open incident of its clusters, which the next start resumes. */
async function sayStillOpen(runtime: LocalRuntime, config: RunConfig): Promise<void> {
  const known = new Set(config.clusters.map((c) => c.clusterId));
  const open = await runtime.store.listIncidents({ state: 'open' }).catch(() => []);
  for (const i of open.filter((o) => known.has(o.clusterId)))
    logLine(`incident ${incidentLabel(i)} stays open in ${config.statePath}; the next start resumes it`);
}
