// A TCP fault proxy in front of one upstream host:port. It keeps its own port for life, so the
// URL that etcd advertises for a member stays valid through cut and heal.
//
// Modes:
//  - pass:      bytes flow both ways.
//  - cut:       connection refused: the listener is closed and every live connection is reset.
//  - blackhole: connections are accepted but nothing flows either way; nothing is closed, so
//               callers run into their own deadlines. Reading is paused rather than dropped, so a
//               heal resumes live streams intact, as TCP would after a partition.
//  - delay:     every chunk, both ways, is held for delayMs; order is always kept.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { freePort } from './free-port.ts';

export type FaultMode = 'pass' | 'cut' | 'blackhole' | { delayMs: number };

export interface FaultProxyOptions {
  upstreamPort: number;
  upstreamHost?: string;
  /**
   * Unset or 0 (the default): a free port of this process's own slice (free-port.ts), never one of
   * the kernel's ephemeral range: a cut proxy's port is closed until it heals, and a port the
   * kernel hands out next could go to another lab meanwhile, whose member would then answer here.
   * The proxy keeps its port for life.
   */
  port?: number;
  host?: string;
  mode?: FaultMode;
}

export function isFaultMode(value: unknown): value is FaultMode {
  if (value === 'pass' || value === 'cut' || value === 'blackhole') return true;
  if (typeof value !== 'object' || value === null) return false;
  const delayMs = (value as { delayMs?: unknown }).delayMs;
  return typeof delayMs === 'number' && Number.isFinite(delayMs) && delayMs >= 0;
}

export function describeMode(mode: FaultMode): string {
  return typeof mode === 'object' ? `delay ${mode.delayMs}ms` : mode;
}

interface QueuedChunk {
  chunk: Buffer;
  dueAt: number;
}

/** One direction of a proxied connection. A single ordered queue means delay never reorders. */
class Link {
  readonly from: net.Socket;
  readonly to: net.Socket;
  private readonly modeOf: () => FaultMode;
  private readonly queue: QueuedChunk[] = [];
  private timer: NodeJS.Timeout | undefined;
  private waitingForDrain = false;
  /** The source sent FIN: once the queue is empty, pass the FIN on. */
  ended = false;

  constructor(from: net.Socket, to: net.Socket, modeOf: () => FaultMode) {
    this.from = from;
    this.to = to;
    this.modeOf = modeOf;
    from.on('data', (chunk: Buffer) => this.accept(chunk));
    from.on('end', () => {
      this.ended = true;
      this.flush();
    });
    to.on('drain', () => {
      this.waitingForDrain = false;
      this.applyMode();
    });
    this.applyMode();
  }

  private accept(chunk: Buffer): void {
    const mode = this.modeOf();
    const delayMs = typeof mode === 'object' ? mode.delayMs : 0;
    this.queue.push({ chunk, dueAt: performance.now() + delayMs });
    this.flush();
  }

  private flush(): void {
    this.clearTimer();
    if (this.modeOf() === 'blackhole' || !this.to.writable) return;
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      const waitMs = head.dueAt - performance.now();
      if (waitMs > 0) {
        this.timer = setTimeout(() => this.flush(), Math.ceil(waitMs));
        return;
      }
      this.queue.shift();
      if (!this.to.write(head.chunk)) {
        this.waitingForDrain = true;
        this.from.pause();
      }
    }
    if (this.ended) this.to.end();
  }

  /** Called on every mode change: blackhole stops reading; anything else resumes and flushes. */
  applyMode(): void {
    if (this.modeOf() === 'blackhole') {
      this.clearTimer();
      this.from.pause();
      return;
    }
    if (!this.waitingForDrain) this.from.resume();
    this.flush();
  }

  dispose(): void {
    this.clearTimer();
    this.queue.length = 0;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

class ProxiedConnection {
  private readonly client: net.Socket;
  private readonly upstream: net.Socket;
  private readonly links: Link[];
  private closedSockets = 0;

  constructor(client: net.Socket, upstream: net.Socket, modeOf: () => FaultMode, onDone: () => void) {
    this.client = client;
    this.upstream = upstream;
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const toUpstream = new Link(client, upstream, modeOf);
    const toClient = new Link(upstream, client, modeOf);
    this.links = [toUpstream, toClient];
    const watch = (socket: net.Socket, other: net.Socket, linkFrom: Link, linkTo: Link) => {
      // ECONNRESET, EPIPE, ECONNREFUSED from upstream: the pair is over, nothing to crash for.
      socket.on('error', () => this.destroy());
      socket.on('close', () => {
        linkTo.dispose();
        // A clean FIN is passed on by the link once its queue drains; anything else ends the pair.
        if (!linkFrom.ended) other.destroy();
        if (++this.closedSockets === 2) onDone();
      });
    };
    watch(client, upstream, toUpstream, toClient);
    watch(upstream, client, toClient, toUpstream);
  }

  applyMode(): void {
    for (const link of this.links) link.applyMode();
  }

  /** Reset rather than FIN, so a caller mid-request fails at once, as on a dead host. */
  reset(): void {
    for (const link of this.links) link.dispose();
    for (const socket of [this.client, this.upstream]) {
      if (socket.destroyed) continue;
      if (socket.readyState === 'open') socket.resetAndDestroy();
      else socket.destroy();
    }
  }

  destroy(): void {
    for (const link of this.links) link.dispose();
    this.client.destroy();
    this.upstream.destroy();
  }
}

export class FaultProxy {
  readonly host: string;
  readonly upstreamHost: string;
  readonly upstreamPort: number;
  private boundPort: number;
  private currentMode: FaultMode = 'pass';
  private server: net.Server | undefined;
  private readonly connections = new Set<ProxiedConnection>();
  private closed = false;
  /** Mode changes run one at a time: cut and heal are asynchronous. */
  private pending: Promise<void> = Promise.resolve();

  constructor(options: FaultProxyOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.upstreamHost = options.upstreamHost ?? '127.0.0.1';
    this.upstreamPort = options.upstreamPort;
    this.boundPort = options.port ?? 0;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `http://${this.host}:${this.boundPort}`;
  }

  get mode(): FaultMode {
    return this.currentMode;
  }

  /** Binds the listener (unless the initial mode is cut). Called once by startFaultProxy. */
  async start(initialMode: FaultMode = 'pass'): Promise<void> {
    if (this.boundPort === 0) await this.listenOnFreePort();
    if (initialMode === 'cut') await this.unlisten();
    await this.setMode(initialMode);
  }

  /** A port of the slice, bound; another one if it was taken between the pick and the bind. */
  private async listenOnFreePort(): Promise<void> {
    for (let tries = 1; ; tries++) {
      this.boundPort = await freePort(this.host);
      try {
        await this.listen();
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || tries >= 5) throw error;
      }
    }
  }

  setMode(mode: FaultMode): Promise<void> {
    const next = this.pending.then(() => this.applyMode(mode));
    this.pending = next.catch(() => undefined);
    return next;
  }

  cut(): Promise<void> {
    return this.setMode('cut');
  }

  blackhole(): Promise<void> {
    return this.setMode('blackhole');
  }

  delay(delayMs: number): Promise<void> {
    return this.setMode({ delayMs });
  }

  heal(): Promise<void> {
    return this.setMode('pass');
  }

  /** Number of live proxied connections; useful to assert a cut really dropped them. */
  get connectionCount(): number {
    return this.connections.size;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pending;
    this.dropConnections();
    await this.unlisten();
  }

  private async applyMode(mode: FaultMode): Promise<void> {
    if (this.closed) throw new Error(`fault proxy on port ${this.boundPort} is closed`);
    // Modes also arrive as JSON from the lab daemon's control port.
    if (!isFaultMode(mode)) throw new Error(`invalid fault mode ${JSON.stringify(mode)}; use pass, cut, blackhole or { delayMs }`);
    this.currentMode = mode;
    if (mode === 'cut') {
      // The listener stops accepting at once, but its close completes only when its sockets are gone.
      const closing = this.unlisten();
      this.dropConnections();
      await closing;
      return;
    }
    if (!this.server) await this.listen();
    for (const connection of this.connections) connection.applyMode();
  }

  private dropConnections(): void {
    for (const connection of this.connections) connection.reset();
    this.connections.clear();
  }

  private listen(): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: this.boundPort, host: this.host, exclusive: true }, () => {
        server.off('error', reject);
        // Accept errors (EMFILE and the like) must not crash the process that hosts the proxy.
        server.on('error', () => undefined);
        this.server = server;
        this.boundPort = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  private unlisten(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    if (this.closed || this.currentMode === 'cut') {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect({ host: this.upstreamHost, port: this.upstreamPort });
    const connection: ProxiedConnection = new ProxiedConnection(
      client,
      upstream,
      () => this.currentMode,
      () => this.connections.delete(connection),
    );
    this.connections.add(connection);
  }
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const proxy = new FaultProxy(options);
  await proxy.start(options.mode ?? 'pass');
  return proxy;
}
