// The WebSocket under client-node's Exec and PortForward, handed to them through their public
// `WebSocketInterface` constructor parameter. It opens the socket as client-node's own
// WebSocketHandler does (src/web-socket-handler.ts: server of the current cluster, https→wss,
// the same subprotocols, kubeconfig auth via applyToHTTPSOptions), with two differences:
//  - a refusal before the upgrade keeps its status, content type and body (client-node reports
//    only "Unexpected server response: N", kube-paths.md §4): the connect rejects with UpgradeRefused;
//  - the caller gets the socket as soon as it exists, so a deadline or a close can end it even
//    while the handshake hangs.
import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import WebSocket from 'ws';

/** client-node's list, in its order (v5 first: exec goes through the API server's translator). */
const PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
/** A v5 CLOSE frame; the API server sends none to clients (§4), and client-node's handlers choke on one. */
const CLOSE_CHANNEL = 255;
/** Status bodies are small; a larger answer is cut here. */
const BODY_LIMIT = 64 * 1024;

/** The API server answered the upgrade with something other than 101. */
export class UpgradeRefused extends Error {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  constructor(status: number, contentType: string, body: string) {
    super(`HTTP ${status} before the upgrade: ${body}`);
    this.name = 'UpgradeRefused';
    this.status = status;
    this.contentType = contentType;
    this.body = body;
  }
}

export interface TransportOptions {
  /** Called with the socket as soon as it exists, before its handshake ends. */
  onSocket(ws: WebSocket): void;
  /** ws's own handshake timeout; none when absent. */
  handshakeTimeoutMs?: number;
  /**
   * The subprotocols to offer, in order; client-node's list by default. Offering v5 sends an exec
   * through the API server's translator, which upgrades before it dials the kubelet (§0.3).
   */
  protocols?: readonly string[];
}

type TextHandler = ((text: string) => boolean) | null;
type BinaryHandler = ((channel: number, data: Buffer) => boolean) | null;

/** Structurally client-node's WebSocketInterface (not exported by its index). */
export interface StreamTransport {
  connect(path: string, textHandler: TextHandler, binaryHandler: BinaryHandler): Promise<WebSocket>;
}

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
    response.on('data', (chunk: Buffer) => {
      if (size < BODY_LIMIT) chunks.push(chunk.subarray(0, BODY_LIMIT - size));
      size += chunk.length;
    });
    response.on('end', done);
    response.on('error', done);
    response.on('aborted', done);
  });
}

function wsUrl(config: KubeConfig, path: string): string {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('No cluster is defined.');
  const ssl = cluster.server.startsWith('https://');
  return `${ssl ? 'wss' : 'ws'}://${cluster.server.slice(ssl ? 8 : 7)}${path}`;
}

export function streamTransport(config: KubeConfig, options: TransportOptions): StreamTransport {
  return {
    async connect(path, textHandler, binaryHandler) {
      const url = wsUrl(config, path);
      const wsOptions: WebSocket.ClientOptions = {};
      if (options.handshakeTimeoutMs !== undefined) wsOptions.handshakeTimeout = options.handshakeTimeoutMs;
      await config.applyToHTTPSOptions(wsOptions);
      return new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url, [...(options.protocols ?? PROTOCOLS)], wsOptions);
        let opened = false;
        // An error after open is followed by 'close', which the callers watch; without a
        // listener ws would throw it.
        ws.on('error', (error) => {
          if (!opened) reject(error);
        });
        ws.on('unexpected-response', (_request, response) => {
          void readBody(response).then((body) => {
            reject(new UpgradeRefused(response.statusCode ?? 0, response.headers['content-type'] ?? '', body));
            ws.terminate();
          });
        });
        ws.on('open', () => {
          opened = true;
          resolve(ws);
        });
        ws.on('message', (data, isBinary) => {
          if (!Buffer.isBuffer(data) || data.length === 0) return;
          let keep: boolean | undefined;
          try {
            if (!isBinary) keep = textHandler?.(data.toString('utf8'));
            else if (data[0] !== CLOSE_CHANNEL) keep = binaryHandler?.(data[0]!, data.subarray(1));
          } catch {
            // client-node's handlers throw on a channel they do not know; end the stream instead.
            keep = false;
          }
          if (keep === false) ws.close();
        });
        options.onSocket(ws);
      });
    },
  };
}
