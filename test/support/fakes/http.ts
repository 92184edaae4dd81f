// The HTTP side every protocol-level fake shares: a server on a free loopback port that reads the
// whole request, insists on a SigV4-signed one (as AWS does, so a client that forgot its
// credentials fails here too), and turns a thrown AwsFakeError into the protocol's error shape.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  method: string;
  /** The path, percent-decoded segment by segment by the caller that needs it. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeResponse {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** An error as the service would return it: HTTP status, error code, message. */
export class AwsFakeError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'AwsFakeError';
    this.status = status;
    this.code = code;
  }
}

export interface FakeServer {
  readonly endpoint: string;
  close(): Promise<void>;
}

export async function startFakeServer(
  handle: (request: FakeRequest) => Promise<FakeResponse> | FakeResponse,
  formatError: (error: AwsFakeError) => FakeResponse,
): Promise<FakeServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const respond = (response: FakeResponse) => {
        const payload = JSON.stringify(response.body);
        res.writeHead(response.status, { 'content-length': Buffer.byteLength(payload), ...response.headers });
        res.end(payload);
      };
      Promise.resolve()
        .then(() => {
          if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ')) {
            throw new AwsFakeError(403, 'MissingAuthenticationTokenException', 'the request is not signed with SigV4');
          }
          return handle(request);
        })
        .then(respond, (error: unknown) =>
          respond(formatError(error instanceof AwsFakeError ? error : new AwsFakeError(500, 'InternalFailure', String(error)))),
        );
    });
  });
  return serveOnLoopback(server);
}

/** Listens on a free loopback port; `close` drops kept-alive connections, which would hold it open. */
export async function serveOnLoopback(server: Server): Promise<FakeServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // SDK clients keep connections alive; close would otherwise wait for them.
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** JSON body of an AWS JSON or REST-JSON request; a body that is not JSON is the client's error. */
export function jsonBody(request: FakeRequest): Record<string, unknown> {
  if (request.body === '') return {};
  try {
    const value: unknown = JSON.parse(request.body);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new AwsFakeError(400, 'SerializationException', 'the request body is not a JSON object');
}
