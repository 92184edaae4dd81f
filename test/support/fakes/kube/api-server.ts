// A protocol-level FAKE Kubernetes API server for tests: plain HTTP on loopback, objects in memory,
// real wire shapes (Status errors, the port-forward WebSocket protocol), so @kubernetes/client-node
// runs unmodified against it. Failure texts follow ../shared/notes/kube-paths.md.
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { type JsonObject, text } from './patch.ts';
import { execServer } from './exec.ts';
import { type FaultCounter, FaultInjector, type FaultSpec } from './faults.ts';
import { type NodeFault, type Upstream, portForwardServer } from './portforward.ts';
import { discovery } from './discovery.ts';
import { DEFAULT_COLLECTION_DELAY_MS, type GarbageCollector, startGarbageCollector } from './garbage-collector.ts';
import { INITIAL_NAMESPACES, NAMESPACES, putNamespace } from './namespace-lifecycle.ts';
import { openApi } from './openapi.ts';
import { forbidden } from './status.ts';
import { DEFAULT_RUNTIME_DOWN_NOTICED_MS, postedByKubelet, runtimeDown, stoppedPosting } from './node-status.ts';
import { DEFAULT_NODE_MONITOR_GRACE_MS } from './node-status.ts';
import { handleRest } from './routes.ts';
import { badRequest } from './status.ts';
import { ObjectStore, type ResourceType, metadataOf, resourceType } from './store.ts';
import { type DropMode, type WatchHub, isWatch, watchServer } from './watch.ts';

export type { NodeFault, Upstream } from './portforward.ts';
export type { FaultCounter, FaultSpec } from './faults.ts';

export interface KubeApiFakeOptions {
  /** How long a deleted Machine keeps its deletionTimestamp before it goes (default 100 ms). */
  machineDeletionMs?: number;
  /** How many changes a watch can resume over before it gets 410 Gone (default 1000). */
  watchHistoryLimit?: number;
  /** The bearer token its kubeconfig carries (default fake-token); the fake counts the requests that send it. */
  token?: string;
  /** How long a stopped kubelet's Node stays Ready before the node lifecycle controller marks it Unknown (default 40 s, as --node-monitor-grace-period). */
  nodeMonitorGracePeriodMs?: number;
  /** How long after its container runtime stops the kubelet posts Ready False (default 30 s, node-status.ts). */
  runtimeDownNoticedMs?: number;
  /** How long after an owner goes the garbage collector collects its dependents (default 20 ms). */
  garbageCollectionDelayMs?: number;
}

export interface ControlPlaneNode {
  name: string;
  internalIp: string;
  /** Creates the Machine `<machine>` in `namespace` whose status.nodeRef names this node. */
  machine?: { name: string; namespace: string; clusterName: string };
  /** kubeadm's `kubeadm.kubernetes.io/etcd.advertise-client-urls` annotation on the etcd pod. */
  clientUrl?: string;
  /** The etcd container's flags after `etcd`, as kubeadm writes them (e.g. --listen-metrics-urls=http://127.0.0.1:2381). */
  etcdFlags?: string[];
}

/** metav1.Time's wire form: RFC 3339 in whole seconds. */
const rfc3339Now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

const NODES = resourceType('', 'nodes')!;
const PODS = resourceType('', 'pods')!;
const SECRETS = resourceType('', 'secrets')!;
const MACHINES = resourceType('cluster.x-k8s.io', 'machines')!;
/** The namespace controller empties a terminating namespace in passes this far apart. */
const NAMESPACE_PASS_MS = 50;

export class KubeApiFake {
  readonly server: string;
  readonly store: ObjectStore;
  private readonly faults = new Map<string, NodeFault>();
  private readonly upstreams = new Map<string, Upstream>();
  /** `<node>:<pod port>`: a listener of its own beside the node's etcd, as the metrics port is. */
  private readonly portUpstreams = new Map<string, Upstream>();
  private readonly podRoots = new Map<string, string>();
  private readonly podPrefixes: string[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The node lifecycle controller's grace timer for each node whose kubelet is down. */
  private readonly silentKubelets = new Map<string, NodeJS.Timeout>();
  nodeMonitorGracePeriodMs = DEFAULT_NODE_MONITOR_GRACE_MS;
  runtimeDownNoticedMs = DEFAULT_RUNTIME_DOWN_NOTICED_MS;
  /** Set once the server runs: what it collected, for tests. */
  garbageCollector?: GarbageCollector;
  /**
   * Every REST request, method and path, in order: tests count the writes they expect once.
   * `injected` is how a failNext() fault answered it instead (a status code, or 'reset').
   */
  readonly requests: { method: string; path: string; watch: boolean; contentType?: string; injected?: number | 'reset' }[] = [];
  /** Armed by failNext(); consulted before any request is served. */
  readonly injected = new FaultInjector();
  /** Every stream upgrade (exec, port-forward), by path, in order: which pod each stream went to. */
  readonly upgrades: { path: string; query: string }[] = [];
  /** The kubeconfig's bearer token, and how many requests (REST and upgrades) sent it. */
  token = 'fake-token';
  bearerRequests = 0;
  private readonly close: () => Promise<void>;
  private readonly watches: WatchHub | undefined;

  constructor(server: string, store: ObjectStore, close: () => Promise<void>, watches?: WatchHub) {
    this.server = server;
    this.store = store;
    this.close = close;
    this.watches = watches;
  }

  /** Test hook: closes every open watch; `reset` (default) as a network blip, `end` as the server's watch timeout. */
  dropWatches(mode: DropMode = 'reset'): void {
    this.watches?.drop(mode);
  }

  /** Test hook: new watches are refused (503) until allowed again, as by an API server restarting. */
  watchesRefused = false;

  /**
   * Test hook: the next `times` (default 1) requests matching `method`, `path` (and `body`) fail
   * with a Status error as the API server writes it (default 500 InternalError), or with the
   * connection dropped (`status: 'reset'`). The counter says how many times it fired.
   */
  failNext(spec: FaultSpec): FaultCounter {
    return this.injected.add(spec);
  }

  /** Test hook: forgets the watch history; a watch resuming from before now gets 410 Gone. */
  compactWatchHistory(): void {
    this.store.compactHistory();
  }

  /** Test hook: a BOOKMARK now on every open watch that allowed bookmarks. */
  sendWatchBookmarks(): void {
    this.watches?.bookmark();
  }

  /** How many watches are open (for tests to wait on a reconnect). */
  get openWatches(): number {
    return this.watches?.open ?? 0;
  }

  /** A Node, its etcd mirror pod `etcd-<node>` (§3 naming) and optionally its CAPI Machine. */
  addControlPlaneNode(node: ControlPlaneNode): void {
    this.store.put(NODES, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: node.name, labels: { 'node-role.kubernetes.io/control-plane': '' } },
      status: {
        addresses: [
          { type: 'InternalIP', address: node.internalIp },
          { type: 'Hostname', address: node.name },
        ],
      },
    });
    this.kubeletPosts(node.name);
    this.store.put(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `etcd-${node.name.toLowerCase()}`,
        namespace: 'kube-system',
        labels: { component: 'etcd', tier: 'control-plane' },
        ...(node.clientUrl ? { annotations: { 'kubeadm.kubernetes.io/etcd.advertise-client-urls': node.clientUrl } } : {}),
      },
      spec: {
        nodeName: node.name,
        hostNetwork: true,
        containers: [{ name: 'etcd', image: 'registry.k8s.io/etcd:3.5.21-0', ...(node.etcdFlags ? { command: ['etcd', ...node.etcdFlags] } : {}) }],
      },
      status: { phase: 'Running', podIP: node.internalIp },
    });
    if (node.machine) {
      this.addNamespace(node.machine.namespace);
      this.store.put(MACHINES, {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'Machine',
        metadata: {
          name: node.machine.name,
          namespace: node.machine.namespace,
          labels: { 'cluster.x-k8s.io/cluster-name': node.machine.clusterName, 'cluster.x-k8s.io/control-plane': '' },
        },
        spec: { clusterName: node.machine.clusterName, bootstrap: { dataSecretName: `${node.machine.name}-bootstrap` } },
        status: { nodeRef: { apiVersion: 'v1', kind: 'Node', name: node.name }, phase: 'Running' },
      });
    }
  }

  /** A Secret of `data` (plain text, stored base64), of type Opaque and without labels unless `as` says. */
  putSecret(namespace: string, name: string, data: Record<string, string>, as: { type?: string; labels?: Record<string, string> } = {}): void {
    const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    const metadata = { name, namespace, ...(as.labels ? { labels: as.labels } : {}) };
    this.addNamespace(namespace);
    this.store.put(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata, type: as.type ?? 'Opaque', data: encoded });
  }

  /** A Namespace, Active, unless it exists already (objects created through the API need theirs: namespace-lifecycle.ts). */
  addNamespace(name: string): void {
    putNamespace(this.store, name);
  }

  /**
   * DELETE of a Namespace: it goes Terminating (new content refused), the namespace controller
   * deletes what is in it, each object held by its finalizers as usual, and the Namespace goes
   * once it is empty. The system namespaces are refused (NamespaceLifecycle: "this namespace may
   * not be deleted").
   */
  terminateNamespace(name: string): void {
    if ((INITIAL_NAMESPACES as readonly string[]).includes(name)) throw forbidden('namespaces', '', name, 'this namespace may not be deleted');
    const namespace = this.store.get(NAMESPACES, '', name);
    const metadata = metadataOf(namespace);
    if (metadata.deletionTimestamp === undefined) {
      metadata.deletionTimestamp = rfc3339Now();
      this.store.put(NAMESPACES, { ...namespace, status: { phase: 'Terminating' } });
    }
    const pass = (): void => {
      const inside = this.store.all().filter(({ type, object }) => type.namespaced && metadataOf(object).namespace === name);
      if (inside.length === 0) {
        if (this.store.find(NAMESPACES, '', name)) this.store.remove(NAMESPACES, '', name);
        return;
      }
      for (const { type, object } of inside) {
        const meta = metadataOf(object);
        const held = Array.isArray(meta.finalizers) && meta.finalizers.length > 0;
        if (!held) this.store.remove(type, name, text(meta.name));
        else if (meta.deletionTimestamp === undefined) this.store.put(type, { ...object, metadata: { ...meta, deletionTimestamp: rfc3339Now() } });
      }
      later();
    };
    // The controller works after the DELETE was answered with the Terminating Namespace.
    const later = (): void => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        pass();
      }, NAMESPACE_PASS_MS);
      this.timers.add(timer);
    };
    later();
  }

  /** Test hook: the Node object goes, its pods stay (before PodGC, §3). */
  deleteNode(name: string): void {
    this.store.remove(NODES, '', name);
  }

  /** Where the node's etcd pod is reached, on every port that has no upstream of its own. */
  setUpstream(node: string, upstream: Upstream): void {
    this.upstreams.set(node, upstream);
  }

  /** Where one port of the node's etcd pod is reached (hostNetwork: another listener of the node, e.g. /metrics). */
  setPortUpstream(node: string, podPort: number, upstream: Upstream): void {
    this.portUpstreams.set(`${node}:${podPort}`, upstream);
  }

  /** The node's pod filesystem: an exec's argv paths under /etc/kubernetes/pki/ are read from `<dir>/etc/kubernetes/pki/`. */
  setPodRoot(node: string, dir: string): void {
    this.podRoots.set(node, dir);
  }

  podRootOf(node: string): string | undefined {
    return this.podRoots.get(node);
  }

  /**
   * Another directory of every pod (e.g. `/etc/etcd/pki/`) read from the pod root as
   * /etc/kubernetes/pki/ is: an exec's argv paths under it, and an executable there run as argv[0].
   */
  addPodPathPrefix(prefix: string): void {
    if (!prefix.startsWith('/') || !prefix.endsWith('/')) throw new Error(`pod path prefix ${prefix}: must start and end with /`);
    this.podPrefixes.push(prefix);
  }

  podPathPrefixes(): readonly string[] {
    return this.podPrefixes;
  }

  /**
   * Streams already open through the node go too, as they do when its kubelet or runtime dies; the
   * Node goes Ready Unknown, tainted unreachable, once the grace period has passed (node-status.ts).
   */
  kubeletDown(node: string): void {
    this.faults.set(node, 'kubelet-down');
    this.cutStreams(node);
    this.forgetGraceTimer(node);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.silentKubelets.delete(node);
      const current = this.store.find(NODES, '', node);
      if (current && this.faultOf(node) === 'kubelet-down') this.store.put(NODES, stoppedPosting(current, rfc3339Now()));
    }, this.nodeMonitorGracePeriodMs);
    this.timers.add(timer);
    this.silentKubelets.set(node, timer);
  }

  /**
   * Streams through the node go; its kubelet still posts status, and once it notices the runtime
   * gone it posts Ready False, "container runtime is down" (node-status.ts): not Unknown, and no
   * unreachable taint, so Cluster API's drain treats the Node as reachable.
   */
  containerdDown(node: string): void {
    this.faults.set(node, 'containerd-down');
    this.cutStreams(node);
    this.forgetGraceTimer(node);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.silentKubelets.delete(node);
      const current = this.store.find(NODES, '', node);
      if (current && this.faultOf(node) === 'containerd-down') this.store.put(NODES, runtimeDown(current, rfc3339Now()));
    }, this.runtimeDownNoticedMs);
    this.timers.add(timer);
    this.silentKubelets.set(node, timer);
  }

  /** Set once the stream servers exist. */
  cutStreams: (node: string) => void = () => undefined;

  /** A kubelet that comes back posts its status at once: Ready True, and the unreachable taints go. */
  heal(node: string): void {
    const wasFaulty = this.faults.has(node);
    this.faults.delete(node);
    this.forgetGraceTimer(node);
    if (wasFaulty) this.kubeletPosts(node);
  }

  private forgetGraceTimer(node: string): void {
    const timer = this.silentKubelets.get(node);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.timers.delete(timer);
    this.silentKubelets.delete(node);
  }

  private kubeletPosts(node: string): void {
    const current = this.store.find(NODES, '', node);
    if (current) this.store.put(NODES, postedByKubelet(current, rfc3339Now()));
  }

  faultOf(node: string): NodeFault | undefined {
    return this.faults.get(node);
  }

  upstreamOf(node: string, port?: number): Upstream | undefined {
    return (port === undefined ? undefined : this.portUpstreams.get(`${node}:${port}`)) ?? this.upstreams.get(node);
  }

  /** Machines get a deletionTimestamp, then go; a finalizer holds them until it is patched away. */
  scheduleMachineDeletion(namespace: string, name: string, afterMs: number): void {
    const machine = this.store.get(MACHINES, namespace, name);
    const metadata = metadataOf(machine);
    if (metadata.deletionTimestamp === undefined) {
      metadata.deletionTimestamp = new Date().toISOString();
      this.store.put(MACHINES, machine);
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const current = this.store.find(MACHINES, namespace, name);
      if (!current) return;
      const finalizers = metadataOf(current).finalizers;
      if (Array.isArray(finalizers) && finalizers.length > 0) this.scheduleMachineDeletion(namespace, name, afterMs);
      else this.store.remove(MACHINES, namespace, name);
    }, afterMs);
    this.timers.add(timer);
  }

  /** How many REST requests with this method had a path ending in `pathSuffix`. */
  requestCount(method: string, pathSuffix: string): number {
    return this.requests.filter((r) => r.method === method && r.path.endsWith(pathSuffix)).length;
  }

  /** A client-node KubeConfig for this server (no auth: the fake does not check any). */
  kubeConfig(): KubeConfig {
    const config = new KubeConfig();
    config.loadFromString(this.kubeconfigYaml());
    return config;
  }

  /** The kubeconfig text (JSON is valid YAML), to write to a file for `--kubeconfig`. */
  kubeconfigYaml(): string {
    return JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // client-node refuses plain http unless TLS verification is off ("HTTP protocol is not allowed…").
      clusters: [{ name: 'fake', cluster: { server: this.server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'fake', user: { token: this.token } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
      'current-context': 'fake',
    });
  }

  /** Writes the kubeconfig to `path` (mode 0600, as kubectl does) and returns the path. */
  writeKubeconfig(path: string): string {
    writeFileSync(path, this.kubeconfigYaml(), { mode: 0o600 });
    return path;
  }

  async stop(): Promise<void> {
    this.garbageCollector?.stop();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.close();
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** apimachinery util/net NewWarningHeader: code 299, agent "-", the text quoted with `"` and `\` escaped. */
const warningHeader = (text: string): string => `299 - "${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;

function send(response: ServerResponse, code: number, body: unknown, warnings: readonly string[] = []): void {
  const text = JSON.stringify(body);
  if (warnings.length > 0) response.setHeader('Warning', warnings.map(warningHeader));
  response.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

export async function startKubeApiFake(options: KubeApiFakeOptions = {}): Promise<KubeApiFake> {
  const machineDeletionMs = options.machineDeletionMs ?? 100;
  const store = new ObjectStore(options.watchHistoryLimit);
  for (const namespace of INITIAL_NAMESPACES) putNamespace(store, namespace);
  const watches = watchServer(store);
  // The handlers below reach `fake` only after it is built, once the server listens.
  const forward = portForwardServer({
    store,
    faultOf: (node) => fake.faultOf(node),
    upstreamOf: (node, port) => fake.upstreamOf(node, port),
  });
  const exec = execServer({
    store,
    faultOf: (node) => fake.faultOf(node),
    podRootOf: (node) => fake.podRootOf(node),
    podPathPrefixes: () => fake.podPathPrefixes(),
  });
  const graceful = (type: ResourceType, namespace: string, name: string): boolean => {
    if (type === NAMESPACES) {
      fake.terminateNamespace(name);
      return true;
    }
    if (type !== MACHINES) return false;
    fake.scheduleMachineDeletion(namespace, name, machineDeletionMs);
    return true;
  };
  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://fake');
      const logged: KubeApiFake['requests'][number] = {
        method: request.method ?? 'GET',
        path: url.pathname,
        watch: ['true', '1'].includes(url.searchParams.get('watch') ?? ''),
        ...(request.headers['content-type'] ? { contentType: request.headers['content-type'] } : {}),
      };
      fake.requests.push(logged);
      if (request.headers.authorization === `Bearer ${fake.token}`) fake.bearerRequests += 1;
      const bytes = await readBody(request);
      const body = bytes.toString('utf8');
      const fault = fake.injected.take(logged.method, url.pathname, body);
      if (fault?.reset) {
        logged.injected = 'reset';
        // No answer at all: the client sees the socket closed under it (ECONNRESET, "other side closed").
        request.socket.destroy();
        return;
      }
      if (fault) {
        logged.injected = fault.code;
        send(response, fault.code, fault.body);
        return;
      }
      if (url.pathname.endsWith('/portforward') || url.pathname.endsWith('/exec')) {
        // upgradeaware.go: a port-forward or exec without an Upgrade header is refused (§3).
        send(response, 400, { ...badRequest('Upgrade request required').status });
        return;
      }
      if (request.method === 'GET' && fake.watchesRefused && isWatch(url)) {
        // As an API server that is restarting answers: the client backs off and tries again.
        send(response, 503, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'the server is currently unable to handle the request',
          reason: 'ServiceUnavailable',
          details: {},
          code: 503,
        });
        return;
      }
      if (request.method === 'GET' && watches.serve(url, response)) return;
      // /openapi/v2 and /openapi/v3[/...] (openapi.ts): kubectl apply reads them before it writes.
      const spec = request.method === 'GET' ? openApi(url, request.headers.accept ?? '', request.headers['if-none-match']) : undefined;
      if (spec !== undefined) {
        response.writeHead(spec.code, spec.headers);
        response.end(spec.body);
        return;
      }
      const document = request.method === 'GET' ? discovery(url.pathname, request.headers.host ?? '') : undefined;
      if (document !== undefined) return send(response, 200, document);
      const answer = handleRest(
        store,
        { graceful },
        { method: request.method ?? 'GET', url, contentType: request.headers['content-type'] ?? '', body, bytes, accept: request.headers.accept ?? '' },
      );
      if (answer) send(response, answer.code, answer.body, answer.warnings);
      else
        send(response, 404, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'the server could not find the requested resource',
          reason: 'NotFound',
          details: {},
          code: 404,
        } satisfies JsonObject);
    })().catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  server.on('upgrade', (request: IncomingMessage, socket, head: Buffer) => {
    // Node's server drops its own error listener from an upgraded socket: a client that resets it
    // after a refusal was answered (a CLI exiting) would throw in the test process. The client
    // sees its side of it; the fake has nothing to do about it.
    socket.on('error', () => undefined);
    if (request.headers.authorization === `Bearer ${fake.token}`) fake.bearerRequests += 1;
    const { pathname, search } = new URL(request.url ?? '/', 'http://fake');
    fake.upgrades.push({ path: pathname, query: search });
    if (!forward.handleUpgrade(request, socket, head) && !exec.handleUpgrade(request, socket, head))
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: KubeApiFake = new KubeApiFake(
    `http://127.0.0.1:${port}`,
    store,
    async () => {
      forward.close();
      exec.close();
      watches.drop('reset');
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    watches,
  );
  fake.cutStreams = (node) => forward.cut(node);
  fake.garbageCollector = startGarbageCollector(store, options.garbageCollectionDelayMs ?? DEFAULT_COLLECTION_DELAY_MS);
  if (options.runtimeDownNoticedMs !== undefined) fake.runtimeDownNoticedMs = options.runtimeDownNoticedMs;
  if (options.token !== undefined) fake.token = options.token;
  if (options.nodeMonitorGracePeriodMs !== undefined) fake.nodeMonitorGracePeriodMs = options.nodeMonitorGracePeriodMs;
  return fake;
}
