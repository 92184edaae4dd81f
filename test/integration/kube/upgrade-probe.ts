// How the adapter will read what client-node throws away: client-node turns any non-101 answer
// into "Unexpected server response: N" (kube-paths.md §4), so a pre-flight raw `ws` upgrade on
// the same URL keeps the status, content type and body that tell a dead kubelet from containerd.
import WebSocket from 'ws';

export type UpgradeOutcome =
  | { upgraded: true; protocol: string }
  | { upgraded: false; status: number; contentType: string; body: string };

export function probeUpgrade(server: string, path: string, timeoutMs = 5_000): Promise<UpgradeOutcome> {
  const url = server.replace(/^http/, 'ws') + path;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['v4.channel.k8s.io'], { handshakeTimeout: timeoutMs });
    ws.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ upgraded: false, status: response.statusCode ?? 0, contentType: response.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString('utf8') });
        ws.terminate();
      });
    });
    ws.on('open', () => {
      resolve({ upgraded: true, protocol: ws.protocol });
      ws.close();
    });
    ws.on('error', (error) => reject(error));
  });
}
