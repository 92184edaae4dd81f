// A loopback port in front of a pod's port, on client-node's PortForward: one WebSocket per
// accepted connection, as kubectl does, because each socket carries exactly one TCP stream
// (kube-paths.md §2b). Every connection's outcome is kept, with its diagnosis, for failuresSince.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { PortForward, type KubeConfig } from '@kubernetes/client-node';
import type WebSocket from 'ws';
import { settlesWithin } from '../../../lib/with-timeout.ts';
import type { LocalForward, PodRef, PodStreamError } from '../streams/pod-streams.ts';
import { diagnoseConnectError, diagnoseErrorChannel } from '../streams/stream-diagnosis.ts';
import { streamTransport } from '../streams/stream-transport.ts';

/** Outcomes kept for failuresSince; older ones are dropped first. */
const KEPT_CONNECTIONS = 256;

interface Connection {
  acceptedAt: number;
  /** Settles once the pod side answered, the stream failed and was diagnosed, or it ended. */
  settled: Promise<void>;
  settle(): void;
  failure?: PodStreamError;
  /** The pod's port closed it without a byte. */
  hungUp?: boolean;
}

export interface ForwardOptions {
  /** How long one connection's upgrade may take before it counts as a timeout. */
  handshakeTimeoutMs: number;
  /** Called once, when the forward is closed. */
  onClose(): void;
}

function newConnection(): Connection {
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  return { acceptedAt: performance.now(), settled, settle };
}

export async function openLocalForward(config: KubeConfig, pod: PodRef, port: number, options: ForwardOptions): Promise<LocalForward> {
  const connections: Connection[] = [];
  const sockets = new Set<net.Socket>();
  const streams = new Set<WebSocket>();
  let closing: Promise<void> | undefined;

  function serve(socket: net.Socket): void {
    const connection = newConnection();
    connections.push(connection);
    if (connections.length > KEPT_CONNECTIONS) connections.shift();
    const fail = (failure: PodStreamError) => {
      connection.failure = failure;
      connection.settle();
    };
    let stream: WebSocket | undefined;
    let localClosed = false;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      localClosed = true;
      sockets.delete(socket);
      // A stream still in its handshake finishes it (bounded by the handshake timeout), so its
      // failure is still diagnosed; it is closed once open (below).
      if (stream && stream.readyState === stream.OPEN) stream.close();
    });
    const errorText: Buffer[] = [];
    const errorChannel = new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (chunk.length > 0) {
          errorText.push(chunk);
          fail(diagnoseErrorChannel(pod, port, Buffer.concat(errorText).toString('utf8')));
        }
        done();
      },
    });
    const transport = streamTransport(config, {
      handshakeTimeoutMs: options.handshakeTimeoutMs,
      onSocket: (ws) => {
        stream = ws;
        streams.add(ws);
        let opened = false;
        let prefixSeen = false;
        let answered = false;
        ws.on('open', () => (opened = true));
        // Channel 0's first frame is the port prefix (§4); anything after it is the pod answering.
        ws.on('message', (data, isBinary) => {
          if (!isBinary || !Buffer.isBuffer(data) || data[0] !== 0) return;
          if (prefixSeen) {
            answered = true;
            connection.settle();
          }
          prefixSeen = true;
        });
        // client-node does not wire close (§4): the local side ends with the stream.
        ws.on('close', () => {
          streams.delete(ws);
          // The pod's port took the connection and let it go without a byte: etcd always sends its
          // HTTP/2 settings first, but a TLS port waits for a TLS hello and drops anything else.
          if (opened && !answered && !localClosed && !connection.failure) connection.hungUp = true;
          // Before open, the rejection below settles it, with its diagnosis.
          if (opened) connection.settle();
          socket.end();
        });
      },
    });
    new PortForward(config, true, transport).portForward(pod.namespace, pod.name, [port], socket, errorChannel, socket).then(
      (ws) => {
        if (socket.destroyed && typeof ws !== 'function') ws.close();
      },
      (error: unknown) => {
        fail(diagnoseConnectError('port-forward', pod, error));
        socket.destroy();
      },
    );
  }

  const server = net.createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);
  const localPort = (server.address() as AddressInfo).port;

  return {
    port: localPort,
    async failuresSince(sinceMs, waitMs) {
      const since = () => connections.filter((c) => c.acceptedAt >= sinceMs);
      await settlesWithin(waitMs, Promise.all(since().map((c) => c.settled)));
      return since().flatMap((c) => (c.failure ? [c.failure] : []));
    },
    hangUpsSince: (sinceMs) => connections.filter((c) => c.acceptedAt >= sinceMs && c.hungUp).length,
    close() {
      closing ??= (async () => {
        options.onClose();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const ws of streams) ws.terminate();
        for (const socket of sockets) socket.destroy();
        for (const connection of connections) connection.settle();
        await closed;
      })();
      return closing;
    },
  };
}
