// The pod port-forward subresource as a real API server + kubelet + containerd answer it to
// client-node: checks and failures before the upgrade, then the v4.channel.k8s.io stream.
// Ground truth: ../shared/notes/kube-paths.md (section numbers cited below).
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { isObject, text, type JsonObject } from './patch.ts';
import { spdyPortForward, type PortForwardTarget } from './portforward-spdy.ts';
import { KubeFakeError, badRequest, internal, notFound } from './status.ts';
import { metadataOf, resourceType, type ObjectStore } from './store.ts';

export type NodeFault = 'kubelet-down' | 'containerd-down';

export interface Upstream {
  host: string;
  port: number;
}

export interface PortForwardContext {
  store: ObjectStore;
  faultOf(node: string): NodeFault | undefined;
  /** Where `port` of the node's etcd pod is reached (hostNetwork: the node's own listeners). */
  upstreamOf(node: string, port: number): Upstream | undefined;
}

// The CRI port-forward server's list; wsstream picks the client's first one it knows (§4).
const SUPPORTED_PROTOCOLS = ['v4.channel.k8s.io', 'v4.base64.channel.k8s.io'];
/**
 * §0.3: SPDY tunnelled through a WebSocket (PortForwardWebsockets, beta in 1.31, what kubectl
 * ≥1.31 offers). The API server's TunnelingHandler takes it when offered and speaks SPDY to the
 * kubelet, so the ports travel in each stream's headers, not in the query.
 */
const TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';
/**
 * `ws` refuses a subprotocol with a "/" (not an RFC 7230 token), which gorilla/websocket on the API
 * server takes: the offer is renamed to this token before `ws` parses it, and answered by its name.
 */
const TUNNEL_TOKEN = 'SPDY-3.1+portforward.k8s.io';
/** wsstream's Close (x/net/websocket) sends 1000, normal closure; a bare close would leave the client 1005. */
export const NORMAL_CLOSURE = 1000;

const PODS = resourceType('', 'pods')!;
const NODES = resourceType('', 'nodes')!;

/** A pre-upgrade answer: a JSON Status or, relayed from the kubelet, plain text. */
type Refusal = { code: number; json: JsonObject | KubeFakeError['status'] } | { code: number; text: string };

function internalIp(node: JsonObject): string {
  const status = node.status;
  const addresses = isObject(status) && Array.isArray(status.addresses) ? status.addresses : [];
  for (const address of addresses) if (isObject(address) && address.type === 'InternalIP') return text(address.address);
  return '0.0.0.0';
}

/** Runs the API server's checks in its order (§0.2); undefined means "upgrade". */
function refusal(context: PortForwardContext, namespace: string, podName: string, ports: string | null, tunnel: boolean): Refusal | undefined {
  try {
    const pod = context.store.get(PODS, namespace, podName); // §3 "Pod gone": 404 pods "etcd-cp-1"
    const spec = pod.spec;
    const nodeName = isObject(spec) && typeof spec.nodeName === 'string' ? spec.nodeName : '';
    if (nodeName === '') throw badRequest(`pod ${podName} does not have a host assigned`); // §0.2
    // §3: GetConnectionInfo's Node GET runs under the request's RequestInfo, so it says `pods "<node>"`.
    const node = context.store.find(NODES, '', nodeName);
    if (!node) throw notFound('pods', '', nodeName);
    const fault = context.faultOf(nodeName);
    // §1: UpgradeAwareHandler fails to dial the kubelet → ErrorToAPIStatus, 500, no reason, no upgrade.
    if (fault === 'kubelet-down') throw internal(`error dialing backend: dial tcp ${internalIp(node)}:10250: connect: connection refused`);
    // The kubelet's getPortForward: a WebSocket request names its ports in the query (V4Options;
    // SPDY carries them in stream headers), refused with err.Error() as a plain-text 400.
    if (!tunnel && (ports === null || ports === '')) return { code: 400, text: 'query parameter "port" is required' };
    // A port that is not a number fails the API server's option parse (its exact words not modelled).
    if (!tunnel && !/^\d+(,\d+)*$/.test(ports ?? '')) throw badRequest(`unable to parse ${JSON.stringify(ports)} as a port`);
    // §2: kubelet GetPortForward → CRI ListPodSandbox fails → streaming.WriteError 500 plain text,
    // which UpgradeAwareHandler echoes raw to the client (CAPI #12711 quotes this text).
    if (fault === 'containerd-down') {
      return {
        code: 500,
        text: 'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /var/run/containerd/containerd.sock: connect: no such file or directory"',
      };
    }
    return undefined;
  } catch (error) {
    if (error instanceof KubeFakeError) return { code: error.status.code, json: error.status };
    throw error;
  }
}

function writeRefusal(socket: Duplex, answer: Refusal): void {
  const isText = 'text' in answer;
  const body = isText ? answer.text : JSON.stringify(answer.json);
  const reason = answer.code === 404 ? 'Not Found' : answer.code === 400 ? 'Bad Request' : 'Internal Server Error';
  const type = isText ? 'text/plain; charset=utf-8' : 'application/json';
  socket.end(`HTTP/1.1 ${answer.code} ${reason}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** §2b: containerd's text when nothing listens on the port inside the host netns. */
function notListeningText(sandboxId: string, port: number): string {
  return (
    `error forwarding port ${port} to pod ${sandboxId}, uid : failed to execute portforward in network namespace "host": ` +
    `failed to connect to localhost:${port} inside namespace "${sandboxId}", IPv4: dial tcp4 127.0.0.1:${port}: connect: connection refused ` +
    `IPv6 dial tcp6 [::1]:${port}: connect: connection refused `
  );
}

function frame(channel: number, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from([channel]), data]);
}

/** One TCP connection per WebSocket (§2b): pipe channel 0 to the node's etcd. */
function pipe(ws: WebSocket, upstream: Upstream | undefined, sandboxId: string, port: number): void {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16LE(port); // §4: each channel's first frame is the port, uint16 LE, on its own.
  ws.send(frame(0, prefix));
  ws.send(frame(1, prefix));
  const fail = () => {
    ws.send(frame(1, Buffer.from(notListeningText(sandboxId, port))));
    ws.close(NORMAL_CLOSURE);
  };
  if (!upstream) return fail();
  const socket = net.connect(upstream.port, upstream.host);
  let connected = false;
  socket.on('connect', () => (connected = true));
  socket.on('error', () => (connected ? ws.close(NORMAL_CLOSURE) : fail()));
  socket.on('data', (chunk: Buffer) => ws.send(frame(0, chunk)));
  socket.on('end', () => ws.close(NORMAL_CLOSURE));
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary && data.length > 1 && data[0] === 0) socket.write(data.subarray(1));
  });
  ws.on('close', () => socket.destroy());
}

const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';

/** http.Error's answer, which UpgradeAwareHandler relays from the kubelet byte for byte. */
function plainError(socket: Duplex, code: 400 | 403, reason: string, body: string, extra = ''): void {
  const text = `${body}\n`;
  socket.end(
    `HTTP/1.1 ${code} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n${extra}Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** Whether the request asks for a plain SPDY/3.1 upgrade (kubectl before 1.31, or its fallback). */
export const isSpdyUpgrade = (request: IncomingMessage): boolean =>
  (request.headers.upgrade ?? '').split(',').some((p) => p.trim().toLowerCase() === 'spdy/3.1');

/**
 * The kubelet's answer to a plain SPDY upgrade (port-forward, and exec as remotecommand serves it):
 * apimachinery httpstream.Handshake on X-Stream-Protocol-Version, taking the client's first
 * protocol the server accepts, then the spdy response upgrader's 101. The protocol negotiated, or
 * undefined when the handshake refused it (answered on the socket).
 */
export function spdyHandshake(request: IncomingMessage, socket: Duplex, serverProtocols: readonly string[]): string | undefined {
  const header = request.headers['x-stream-protocol-version'];
  if (header === undefined) {
    plainError(
      socket,
      400,
      'Bad Request',
      `unable to upgrade: header X-Stream-Protocol-Version does not exist in request with ${Object.keys(request.headers).length} headers`,
    );
    return undefined;
  }
  // One header line per protocol, which Node joins with ", ".
  const clientProtocols = [header]
    .flat()
    .flatMap((value) => value.split(','))
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const negotiated = clientProtocols.find((p) => serverProtocols.includes(p));
  if (negotiated === undefined) {
    const message = `unable to upgrade: unable to negotiate protocol: client supports [${clientProtocols.join(' ')}], server accepts [${serverProtocols.join(' ')}]`;
    const accepted = serverProtocols.map((p) => `X-Accepted-Stream-Protocol-Versions: ${p}\r\n`).join('');
    plainError(socket, 403, 'Forbidden', message, accepted);
    return undefined;
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${negotiated}\r\n\r\n`);
  return negotiated;
}

/** Port-forward's SPDY session on the raw connection once the handshake took it; false when refused. */
function upgradedToSpdy(request: IncomingMessage, socket: Duplex, head: Buffer, target: PortForwardTarget): boolean {
  if (spdyHandshake(request, socket, [PORT_FORWARD_PROTOCOL]) === undefined) return false;
  const session = spdyPortForward({ write: (bytes) => socket.write(bytes) }, target);
  socket.on('data', (chunk: Buffer) => session.receive(chunk));
  socket.on('close', () => session.closed());
  if (head.length > 0) session.receive(head);
  return true;
}

/** The SPDY session rides the WebSocket's binary messages, both ways (client-go TunnelingConnection). */
function tunnelled(ws: WebSocket, target: PortForwardTarget): void {
  const session = spdyPortForward({ write: (bytes) => ws.send(bytes) }, target);
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) session.receive(data);
  });
  ws.on('close', () => session.closed());
}

export interface PortForwardServer {
  /** Handles an upgrade on `.../pods/<pod>/portforward`; false if the path is not one. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Drops every open stream to the node: a kubelet or runtime that dies takes its streams with it. */
  cut(node: string): void;
  close(): void;
}

const PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/portforward$/;

export function portForwardServer(context: PortForwardContext): PortForwardServer {
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => {
      if (offered.has(TUNNEL_TOKEN)) return TUNNEL_PROTOCOL;
      // wsstream handshake walks the client's list in order (§4); ws hands us a Set in that order.
      for (const protocol of offered) if (SUPPORTED_PROTOCOLS.includes(protocol)) return protocol;
      return false;
    },
  });
  /** Every open stream by node, to cut; a WebSocket or, for plain SPDY, the upgraded socket. */
  const open = new Map<string, Set<{ terminate(): void }>>();
  const track = (node: string, stream: { terminate(): void }, onClose: (listener: () => void) => void) => {
    const streams = open.get(node) ?? new Set<{ terminate(): void }>();
    open.set(node, streams.add(stream));
    onClose(() => streams.delete(stream));
  };
  return {
    handleUpgrade(request, socket, head) {
      const url = new URL(request.url ?? '/', 'http://fake');
      const match = PATH.exec(url.pathname);
      if (!match) return false;
      const namespace = decodeURIComponent(match[1]!);
      const podName = decodeURIComponent(match[2]!);
      const ports = url.searchParams.get('ports');
      const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
      const tunnel = offered.includes(TUNNEL_PROTOCOL);
      if (tunnel) request.headers['sec-websocket-protocol'] = offered.map((p) => (p === TUNNEL_PROTOCOL ? TUNNEL_TOKEN : p)).join(', ');
      // A plain SPDY upgrade (kubectl before 1.31, or its fallback): the ports ride the streams too.
      const spdy = isSpdyUpgrade(request);
      const answer = refusal(context, namespace, podName, ports, tunnel || spdy);
      if (answer) {
        writeRefusal(socket, answer);
        return true;
      }
      const pod = context.store.get(PODS, namespace, podName);
      const nodeName = isObject(pod.spec) ? text(pod.spec.nodeName) : '';
      const sandboxId = createHash('sha256')
        .update(text(metadataOf(pod).uid))
        .digest('hex');
      const target: PortForwardTarget = { upstreamAt: (port) => context.upstreamOf(nodeName, port), notListening: (port) => notListeningText(sandboxId, port) };
      if (spdy) {
        if (upgradedToSpdy(request, socket, head, target)) track(nodeName, { terminate: () => socket.destroy() }, (listener) => socket.once('close', listener));
        return true;
      }
      wss.handleUpgrade(request, socket, head, (ws) => {
        track(nodeName, ws, (listener) => ws.once('close', listener));
        if (ws.protocol === TUNNEL_PROTOCOL) tunnelled(ws, target);
        else pipe(ws, target.upstreamAt(Number(ports)), sandboxId, Number(ports));
      });
      return true;
    },
    cut(node) {
      for (const stream of open.get(node) ?? []) stream.terminate();
    },
    close() {
      for (const streams of open.values()) for (const stream of streams) stream.terminate();
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
