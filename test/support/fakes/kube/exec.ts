// The pod exec subresource as a real API server (≥1.30, TranslateStreamCloseWebsocketRequests on)
// + kubelet + containerd answer it to client-node: the API server's checks before the upgrade,
// then the channel protocol, running the REAL etcdctl on this machine in place of the pod's.
// A plain SPDY upgrade (kubectl ≤1.29) gets the same checks and command, served by exec-spdy.ts.
// Ground truth: ../shared/notes/kube-paths.md (section numbers cited below).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { isObject, text, type JsonObject } from './patch.ts';
import { serveSpdyExec, type ExecInput, type ExecOutput } from './exec-spdy.ts';
import { NORMAL_CLOSURE, isSpdyUpgrade, type NodeFault } from './portforward.ts';
import { KubeFakeError, badRequest, internal, notFound } from './status.ts';
import { metadataOf, resourceType, type ObjectStore } from './store.ts';

export interface ExecContext {
  store: ObjectStore;
  faultOf(node: string): NodeFault | undefined;
  /** The etcdctl that stands in for the image's /usr/local/bin/etcdctl (default $ETCDCTL_BIN or PATH). */
  etcdctlBin?: string;
  /** The node's pod filesystem (KubeApiFake.setPodRoot): where the pod's /etc/kubernetes/pki/ lives on this machine. */
  podRootOf?(node: string): string | undefined;
  /** Directories of the pod besides /etc/kubernetes/pki/ that its filesystem serves too (KubeApiFake.addPodPathPrefix). */
  podPathPrefixes?(): readonly string[];
}

export interface ExecServer {
  /** Handles an upgrade on `.../pods/<pod>/exec`; false if the path is not one. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  close(): void;
}

/** A Status as written on channel 3: Go's json.Marshal of metav1.Status, so field order and omitempty hold. */
export interface ChannelStatus {
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { causes: { reason?: string; message: string }[] };
  code?: number;
}

const V5 = 'v5.channel.k8s.io';
// The CRI exec server also takes "", channel.k8s.io and the base64 variants (§4); client-node
// offers v4 before those and reads binary frames only, so only v4 is served on the direct path.
const CRI_PROTOCOLS = ['v4.channel.k8s.io'];
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;
const CLOSE = 255;

const PODS = resourceType('', 'pods')!;
const NODES = resourceType('', 'nodes')!;
const PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/;

// §1 and §2: the texts each fault produces; CAPI #12711 quotes the containerd one.
const CONTAINERD_DOWN =
  'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /var/run/containerd/containerd.sock: connect: no such file or directory"';

interface ExecRequest {
  namespace: string;
  pod: string;
  container: string;
  node: string;
  nodeIp: string;
  sandboxId: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** Go's strconv.ParseBool, which the query decoder uses for PodExecOptions' booleans. */
const flag = (url: URL, name: string): boolean => ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(url.searchParams.get(name) ?? '');

function internalIp(node: JsonObject): string {
  const addresses = isObject(node.status) && Array.isArray(node.status.addresses) ? node.status.addresses : [];
  for (const address of addresses) if (isObject(address) && address.type === 'InternalIP') return text(address.address);
  return '0.0.0.0';
}

/** The API server's checks before any upgrade, in its order (§0.2); throws a KubeFakeError. */
function resolve(store: ObjectStore, namespace: string, podName: string, url: URL): ExecRequest {
  const command = url.searchParams.getAll('command');
  const [stdin, stdout, stderr, tty] = [flag(url, 'stdin'), flag(url, 'stdout'), flag(url, 'stderr'), flag(url, 'tty')];
  // apimachinery validation of PodExecOptions (option parse → 400, §0.1).
  if (command.length === 0) throw badRequest('you must specify at least 1 command');
  if (!stdin && !stdout && !stderr) throw badRequest('you must specify at least one of stdin, stdout, stderr');
  const pod = store.get(PODS, namespace, podName); // §3 "Pod gone": 404 pods "etcd-cp-1"
  const spec = isObject(pod.spec) ? pod.spec : {};
  const names = (Array.isArray(spec.containers) ? spec.containers : []).map((c) => (isObject(c) ? text(c.name) : ''));
  const container = url.searchParams.get('container') ?? (names.length === 1 ? names[0]! : '');
  if (!names.includes(container)) throw badRequest(`container ${container} is not valid for pod ${podName}`); // §0.2
  const node = typeof spec.nodeName === 'string' ? spec.nodeName : '';
  if (node === '') throw badRequest(`pod ${podName} does not have a host assigned`); // §0.2
  // §3: the Node GET runs under the request's RequestInfo, so the 404 says `pods "<node>"`.
  const nodeObject = store.find(NODES, '', node);
  if (!nodeObject) throw notFound('pods', '', node);
  const sandboxId = createHash('sha256')
    .update(text(metadataOf(pod).uid))
    .digest('hex');
  return { namespace, pod: podName, container, node, nodeIp: internalIp(nodeObject), sandboxId, command, stdin, stdout, stderr, tty };
}

function writePreUpgrade(socket: Duplex, code: number, body: string, contentType: string): void {
  const reason = code === 404 ? 'Not Found' : code === 400 ? 'Bad Request' : 'Internal Server Error';
  socket.end(`HTTP/1.1 ${code} ${reason}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** apimachinery NewInternalError: the cause keeps the bare text, the message prefixes it. */
function internalError(message: string): ChannelStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ message }] },
    code: 500,
  };
}

/** The kubelet URL the API server dials (§0.2): Go's url.Values.Encode sorts keys. */
function kubeletUrl(request: ExecRequest): string {
  const params = new URLSearchParams();
  for (const part of request.command) params.append('command', part);
  if (request.stderr) params.append('error', '1');
  if (request.stdout) params.append('output', '1');
  if (request.stdin) params.append('input', '1');
  return `https://${request.nodeIp}:10250/exec/${request.namespace}/${request.pod}/${request.container}?${params.toString()}`;
}

/** §1 / §2 "exec with v5": the translator upgraded, then its SPDY dial to the kubelet failed. */
function faultStatus(fault: NodeFault, request: ExecRequest): ChannelStatus {
  if (fault === 'kubelet-down') {
    return internalError(`error sending request: Post "${kubeletUrl(request)}": dial tcp ${request.nodeIp}:10250: connect: connection refused`);
  }
  // client-go roundtripper.go: a non-Status error body becomes "unable to upgrade connection: <body>".
  return internalError(`unable to upgrade connection: ${CONTAINERD_DOWN}`);
}

/**
 * Exit status as the Status on channel 3 (§4). v5: the translator's codeExitToStatusError;
 * v4: the kubelet's own, carrying containerd's "error executing command [argv], exit code N".
 */
function exitStatus(v5: boolean, command: string[], exitCode: number): ChannelStatus {
  if (exitCode === 0) return { metadata: {}, status: 'Success' };
  const inner = v5 ? `command terminated with exit code ${exitCode}` : `error executing command [${command.join(' ')}], exit code ${exitCode}`;
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: ${inner}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

/** §6: only etcd's binaries are in the image; anything else fails as runc reports it (§4 shapes). */
function missingBinaryStatus(v5: boolean, request: ExecRequest): ChannelStatus {
  const binary = request.command[0] ?? '';
  const why = binary.includes('/') ? `stat ${binary}: no such file or directory` : `exec: "${binary}": executable file not found in $PATH`;
  const kubelet = internalError(
    `error executing command in container: failed to exec in container: failed to start exec "${request.sandboxId}": ` +
      `OCI runtime exec failed: exec failed: unable to start container process: ${why}: unknown`,
  );
  // grafana/mimir#10571: the v5 translator wraps the kubelet's InternalError once more.
  return v5 ? internalError(kubelet.message!) : kubelet;
}

/** Where kubeadm's etcd pod mounts its certificates from the host (§6). */
const POD_PKI = '/etc/kubernetes/pki/';
const PATH_ARG = /^(--[^=]+=)?(\/.*)$/;

/**
 * The argv as the container's mount namespace would resolve it: a path under /etc/kubernetes/pki/
 * or another of `prefixes` (alone, or a flag's value as in `--cacert=/etc/...`) is read from
 * `<root>/etc/kubernetes/pki/...`. etcdctl really opens each file, so a missing one fails as it
 * would in the pod. Without a root the path is left as it is: this machine has no
 * /etc/kubernetes, as a pod without the mount.
 */
export function inPodFilesystem(argv: readonly string[], root: string | undefined, prefixes: readonly string[] = [POD_PKI]): string[] {
  if (root === undefined) return [...argv];
  return argv.map((arg) =>
    arg.replace(PATH_ARG, (whole, flag: string | undefined, file: string) =>
      prefixes.some((p) => file.startsWith(p)) ? `${flag ?? ''}${root}${file}` : whole,
    ),
  );
}

/** etcdctl's words name the pod's paths, as they would inside the container. */
const asPodPaths = (text: string, root: string | undefined, prefixes: readonly string[]): string =>
  root === undefined ? text : prefixes.reduce((said, prefix) => said.replaceAll(`${root}${prefix}`, prefix), text);

const frame = (channel: number, data: Buffer): Buffer => Buffer.concat([Buffer.from([channel]), data]);

function finish(ws: WebSocket, status: ChannelStatus): void {
  ws.send(frame(STATUS, Buffer.from(JSON.stringify(status))));
  ws.close(NORMAL_CLOSURE);
}

/** Where a command's output and its Status go (the SPDY session takes any metav1.Status). */
type CommandOutput = ExecOutput<ChannelStatus>;

const NOTHING_RUNS: ExecInput = { write: () => undefined, end: () => undefined, kill: () => undefined };

/**
 * The pod's command, whichever protocol carries it: the image's etcdctl (the REAL one here), or an
 * executable a test put in the pod's filesystem; argv paths resolved in the pod's filesystem.
 * `v5`: the Status as the API server's translator rewraps the kubelet's (WebSocket v5 only).
 */
function podCommands(context: ExecContext) {
  const children = new Set<ChildProcess>();
  const etcdctl = context.etcdctlBin ?? process.env.ETCDCTL_BIN ?? 'etcdctl';
  return {
    start(request: ExecRequest, v5: boolean, output: CommandOutput): ExecInput {
      const binary = request.command[0] ?? '';
      const root = context.podRootOf?.(request.node);
      const prefixes = [POD_PKI, ...(context.podPathPrefixes?.() ?? [])];
      // The image's etcdctl, or an executable a test put in the pod's filesystem under a served prefix.
      const [inPod] = inPodFilesystem([binary], root, prefixes.slice(1));
      const program = binary === 'etcdctl' || binary === '/usr/local/bin/etcdctl' ? etcdctl : inPod !== binary && fs.existsSync(inPod!) ? inPod! : undefined;
      if (program === undefined) {
        output.finish(missingBinaryStatus(v5, request));
        return NOTHING_RUNS;
      }
      // Async spawn: the lab's fault proxies share this process. An exec carries only the image's env.
      const child = spawn(program, inPodFilesystem(request.command.slice(1), root, prefixes), {
        env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' },
        stdio: [request.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      // A command that exits before its input is all written: the rest goes nowhere, as in the pod.
      child.stdin?.on('error', () => undefined);
      child.stdout?.on('data', (chunk: Buffer) => request.stdout && output.stdout(chunk));
      child.stderr?.on('data', (chunk: Buffer) => request.stderr && output.stderr(Buffer.from(asPodPaths(chunk.toString('utf8'), root, prefixes))));
      let failed = false;
      child.once('error', (error) => {
        failed = true;
        children.delete(child);
        // The stand-in etcdctl is missing here: report it as the runtime's exec failure would be.
        const kubelet = internalError(`error executing command in container: ${error.message}`);
        output.finish(v5 ? internalError(kubelet.message!) : kubelet);
      });
      // 'close' waits for stdout and stderr to drain, so the Status comes after all the output.
      child.once('close', (code, signal) => {
        children.delete(child);
        if (!failed) output.finish(exitStatus(v5, request.command, code ?? (signal ? 137 : 1)));
      });
      return { write: (chunk) => child.stdin?.write(chunk), end: () => child.stdin?.end(), kill: () => child.kill('SIGKILL') };
    },
    close(): void {
      for (const child of children) child.kill('SIGKILL');
      children.clear();
    },
  };
}

export function execServer(context: ExecContext): ExecServer {
  const commands = podCommands(context);
  /** Plain SPDY connections, dropped on close. */
  const spdySockets = new Set<Duplex>();
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => {
      // §0.3: v5 anywhere in the list sends the request to the translator, which serves only v5.
      if (offered.has(V5)) return V5;
      for (const protocol of offered) if (CRI_PROTOCOLS.includes(protocol)) return protocol;
      return false;
    },
  });

  function run(ws: WebSocket, request: ExecRequest, v5: boolean): void {
    // §4 "Initial frame": an empty frame on the lowest writable channel.
    ws.send(Buffer.from([request.stdout ? STDOUT : request.stderr ? STDERR : STATUS]));
    const fault = context.faultOf(request.node);
    if (fault) return finish(ws, faultStatus(fault, request));
    const child = commands.start(request, v5, {
      stdout: (chunk) => ws.send(frame(STDOUT, chunk)),
      stderr: (chunk) => ws.send(frame(STDERR, chunk)),
      finish: (status) => ws.readyState === ws.OPEN && finish(ws, status),
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary || data.length === 0) return;
      if (data[0] === 0) child.write(data.subarray(1));
      // §4 "v5 CLOSE": honoured only when v5 was negotiated.
      else if (v5 && data[0] === CLOSE && data[1] === 0) child.end();
    });
    ws.on('close', () => child.kill());
  }

  return {
    handleUpgrade(httpRequest, socket, head) {
      const url = new URL(httpRequest.url ?? '/', 'http://fake');
      const match = PATH.exec(url.pathname);
      if (!match) return false;
      let request: ExecRequest;
      try {
        request = resolve(context.store, decodeURIComponent(match[1]!), decodeURIComponent(match[2]!), url);
      } catch (error) {
        if (!(error instanceof KubeFakeError)) throw error;
        writePreUpgrade(socket, error.status.code, JSON.stringify(error.status), 'application/json');
        return true;
      }
      const offered = (httpRequest.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
      const v5 = offered.includes(V5);
      const fault = context.faultOf(request.node);
      // Without v5 the request is proxied raw to the kubelet (§0.3), so a fault answers before the upgrade.
      if (!v5 && fault === 'kubelet-down') {
        // §1: UpgradeAwareHandler's dial fails → ErrorToAPIStatus: 500, no reason, JSON Status.
        const { status } = internal(`error dialing backend: dial tcp ${request.nodeIp}:10250: connect: connection refused`);
        writePreUpgrade(socket, 500, JSON.stringify(status), 'application/json');
        return true;
      }
      if (!v5 && fault === 'containerd-down') {
        // §2: kubelet findContainer → CRI fails → streaming.WriteError 500 plain text, echoed raw.
        writePreUpgrade(socket, 500, CONTAINERD_DOWN, 'text/plain; charset=utf-8');
        return true;
      }
      if (isSpdyUpgrade(httpRequest)) {
        // §0.3: no v5, so the API server proxies the SPDY upgrade raw to the kubelet's remotecommand server.
        const serving = serveSpdyExec(httpRequest, socket, head, request, (output) => commands.start(request, false, output));
        if (serving) {
          spdySockets.add(socket);
          socket.once('close', () => spdySockets.delete(socket));
        }
        return true;
      }
      wss.handleUpgrade(httpRequest, socket, head, (ws) => run(ws, request, v5));
      return true;
    },
    close() {
      commands.close();
      for (const socket of spdySockets) socket.destroy();
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
