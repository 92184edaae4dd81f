// Port-forward over SPDY, as the kubelet's streaming server serves it (cri-streaming
// pkg/streaming/portforward/httpstream.go) and containerd forwards each pair of streams: the client
// opens an error stream and a data stream per connection, headers `streamtype`, `port` and
// `requestid`; each gets a SYN_REPLY; a complete pair dials the pod's port and copies both ways.
// When one direction ends, the other gets up to a second (containerd sandbox_portforward_linux.go),
// then both streams are closed (FIN). A dial that fails writes the kubelet's "error forwarding
// port …" text on the error stream and resets both (RST_STREAM CANCEL). PINGs are echoed
// (spdystream handlePingFrame). Over the API server's WebSocket tunnel (SPDY/3.1+portforward.k8s.io,
// kube-paths.md §0.3) the same bytes travel in binary messages (client-go TunnelingConnection).
import net from 'node:net';
import { FLAG_FIN, MAX_DATA_LENGTH, RST_CANCEL, RST_PROTOCOL_ERROR, SpdyFramer, type SpdyFrame, type SpdyHeaders } from './spdy.ts';

export interface SpdyConnection {
  write(bytes: Buffer): void;
}

export interface PortForwardTarget {
  /** Where the pod's port is reached; undefined: nothing listens there. */
  upstreamAt(port: number): { host: string; port: number } | undefined;
  /** The kubelet's error text for a port nothing listens on. */
  notListening(port: number): string;
}

export interface SpdyPortForward {
  /** Bytes from the client, in order. */
  receive(chunk: Buffer): void;
  /** The connection is gone: every forwarded connection goes with it. */
  closed(): void;
}

interface StreamPair {
  requestId: string;
  port: number;
  error?: number;
  data?: number;
  socket?: net.Socket;
  /** Stream ids the client reset: nothing more is written on them. */
  reset: Set<number>;
  localDone: boolean;
  remoteDone: boolean;
  grace?: NodeJS.Timeout;
  finished: boolean;
}

/** containerd: once one direction is done, the other gets this long before both are closed. */
const HALF_CLOSE_GRACE_MS = 1_000;

const first = (headers: SpdyHeaders, name: string): string => headers.get(name)?.[0] ?? '';

export function spdyPortForward(connection: SpdyConnection, target: PortForwardTarget): SpdyPortForward {
  const framer = new SpdyFramer();
  const pairs = new Map<string, StreamPair>();
  const byStream = new Map<number, StreamPair>();
  let gone = false;
  const write = (bytes: Buffer) => {
    if (!gone) connection.write(bytes);
  };

  function sendData(pair: StreamPair, streamId: number | undefined, data: Buffer, flags = 0): void {
    if (streamId === undefined || pair.reset.has(streamId)) return;
    let offset = 0;
    do {
      const chunk = data.subarray(offset, offset + MAX_DATA_LENGTH);
      offset += chunk.length;
      write(framer.data(streamId, chunk, offset >= data.length ? flags : 0));
    } while (offset < data.length);
  }

  /** httpstream.go portForward's deferred Closes: FIN on both streams. */
  function finish(pair: StreamPair): void {
    if (pair.finished) return;
    pair.finished = true;
    clearTimeout(pair.grace);
    pair.socket?.destroy();
    sendData(pair, pair.data, Buffer.alloc(0), FLAG_FIN);
    sendData(pair, pair.error, Buffer.alloc(0), FLAG_FIN);
  }

  /** One direction done: the other gets its grace, and both done finishes at once. */
  function directionDone(pair: StreamPair): void {
    if (pair.localDone && pair.remoteDone) return finish(pair);
    pair.grace ??= setTimeout(() => finish(pair), HALF_CLOSE_GRACE_MS);
  }

  function fail(pair: StreamPair): void {
    if (pair.finished) return;
    pair.finished = true;
    sendData(pair, pair.error, Buffer.from(target.notListening(pair.port)));
    for (const id of [pair.data, pair.error]) if (id !== undefined && !pair.reset.has(id)) write(framer.rstStream(id, RST_CANCEL));
  }

  function forward(pair: StreamPair): void {
    const upstream = target.upstreamAt(pair.port);
    if (!upstream) return fail(pair);
    const socket = net.connect(upstream.port, upstream.host);
    pair.socket = socket;
    let connected = false;
    socket.on('connect', () => (connected = true));
    socket.on('data', (chunk: Buffer) => sendData(pair, pair.data, chunk));
    socket.on('end', () => {
      pair.remoteDone = true;
      directionDone(pair);
    });
    socket.on('error', () => (connected ? finish(pair) : fail(pair)));
  }

  function onSynStream(frame: Extract<SpdyFrame, { type: 'syn_stream' }>): void {
    const port = Number(first(frame.headers, 'port'));
    const streamType = first(frame.headers, 'streamtype');
    // httpStreamReceived: a stream without a valid port or type is refused.
    if (!Number.isInteger(port) || port < 1 || port > 65535 || (streamType !== 'error' && streamType !== 'data')) {
      write(framer.rstStream(frame.streamId, RST_PROTOCOL_ERROR));
      return;
    }
    write(framer.synReply(frame.streamId));
    // Old clients send no request id: the kubelet pairs by stream id (error N, data N+2).
    const requestId = first(frame.headers, 'requestid') || String(streamType === 'error' ? frame.streamId : frame.streamId - 2);
    const pair = pairs.get(requestId) ?? { requestId, port, reset: new Set<number>(), localDone: false, remoteDone: false, finished: false };
    pairs.set(requestId, pair);
    byStream.set(frame.streamId, pair);
    if (streamType === 'error') pair.error = frame.streamId;
    else pair.data = frame.streamId;
    if (pair.error !== undefined && pair.data !== undefined && !pair.socket) forward(pair);
  }

  function onData(frame: Extract<SpdyFrame, { type: 'data' }>): void {
    const pair = byStream.get(frame.streamId);
    if (!pair || frame.streamId !== pair.data || pair.finished) return;
    if (frame.data.length > 0) pair.socket?.write(frame.data);
    if ((frame.flags & FLAG_FIN) !== 0) {
      // The client sends no more: half-close towards the pod, as io.Copy's end closes it.
      pair.socket?.end();
      pair.localDone = true;
      directionDone(pair);
    }
  }

  function onReset(streamId: number): void {
    const pair = byStream.get(streamId);
    if (!pair) return;
    pair.reset.add(streamId);
    if (streamId === pair.data) finish(pair);
  }

  return {
    receive(chunk) {
      for (const frame of framer.push(chunk)) {
        if (frame.type === 'syn_stream') onSynStream(frame);
        else if (frame.type === 'data') onData(frame);
        else if (frame.type === 'rst_stream') onReset(frame.streamId);
        // A client's ping has an odd id; the server answers with the same frame.
        else if (frame.type === 'ping' && frame.id % 2 === 1) write(framer.ping(frame.id));
      }
    },
    closed() {
      gone = true;
      for (const pair of pairs.values()) {
        clearTimeout(pair.grace);
        pair.socket?.destroy();
      }
      pairs.clear();
      byStream.clear();
    },
  };
}
