// A local TCP port in front of client-node's PortForward: one WebSocket per accepted connection,
// as `kubectl port-forward` does, because each socket carries exactly one TCP stream.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { PortForward, type KubeConfig } from '@kubernetes/client-node';

export interface LocalForward {
  port: number;
  /** Everything the error channel carried, over all connections. */
  errors(): string;
  /** Why each failed connection failed: client-node's rejection message. */
  failures(): string[];
  close(): Promise<void>;
}

export async function forwardLocally(config: KubeConfig, namespace: string, pod: string, port: number): Promise<LocalForward> {
  const forward = new PortForward(config);
  const errorText: Buffer[] = [];
  const failures: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const err = new Writable({
      write(chunk: Buffer, _encoding, done) {
        errorText.push(chunk);
        done();
      },
    });
    forward.portForward(namespace, pod, [port], socket, err, socket).then(
      (ws) => {
        // client-node does not wire close (kube-paths.md §4): end the local socket ourselves.
        if (typeof ws !== 'function') ws.on('close', () => socket.destroy());
      },
      (error: unknown) => {
        // A ws ErrorEvent, not an Error: it has `message` and nothing of the body.
        failures.push(typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error));
        socket.destroy();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    errors: () => Buffer.concat(errorText).toString('utf8'),
    failures: () => [...failures],
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
