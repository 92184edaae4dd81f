// One JSON request over a fresh connection, under one deadline. No agent and no keep-alive: a
// pooled socket to a stopped or faulted member would make the next call lie about reachability.
// An https URL goes over TLS, with the client certificate a member with --client-cert-auth wants.
import http from 'node:http';
import https from 'node:https';
import { withTimeout } from '../../functions/lib/with-timeout.ts';

/** An error that keeps the socket-level code (ECONNREFUSED, ECONNRESET, ETIMEDOUT, ...). */
export class HttpCallError extends Error {
  readonly code: string;
  readonly status: number | undefined;
  constructor(message: string, code: string, status?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HttpCallError';
    this.code = code;
    this.status = status;
  }
}

export interface JsonRequest {
  baseUrl: string;
  path: string;
  method?: 'GET' | 'POST';
  body?: unknown;
  timeoutMs: number;
  /** For an https URL: the CA to trust and the client certificate to show (PEM). */
  tls?: ClientTls;
}

export interface ClientTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

export function requestJson<T>(request: JsonRequest): Promise<T> {
  const url = new URL(request.path, request.baseUrl);
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  const method = request.method ?? (payload === undefined ? 'GET' : 'POST');
  const late = () => new HttpCallError(`${method} ${url.href}: no answer within ${request.timeoutMs}ms`, 'ETIMEDOUT');
  return withTimeout(
    request.timeoutMs,
    (deadline) =>
      new Promise<T>((resolve, reject) => {
        let settled = false;
        const finish = (error: Error | undefined, value?: T) => {
          if (settled) return;
          settled = true;
          if (error) reject(error);
          else resolve(value as T);
        };
        const options: https.RequestOptions = {
          method,
          agent: false,
          ...(request.tls ? { ca: request.tls.ca, cert: request.tls.cert, key: request.tls.key } : {}),
          // Past the deadline the request and its socket are destroyed.
          signal: deadline,
          headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        };
        const onResponse = (res: http.IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (error) => finish(toCallError(error, url)));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              finish(new HttpCallError(`${method} ${url.href}: HTTP ${status}: ${errorText(text)}`, 'EHTTP', status));
              return;
            }
            try {
              finish(undefined, (text === '' ? {} : JSON.parse(text)) as T);
            } catch (error) {
              finish(new HttpCallError(`${method} ${url.href}: bad JSON: ${text.slice(0, 200)}`, 'EBADJSON', status, { cause: error }));
            }
          });
        };
        const req = url.protocol === 'https:' ? https.request(url, options, onResponse) : http.request(url, options, onResponse);
        req.on('error', (error) => finish(toCallError(error, url)));
        req.end(payload);
      }),
    late,
  );
}

function toCallError(error: Error, url: URL): HttpCallError {
  const code = (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
  return new HttpCallError(`${url.href}: ${code}: ${error.message}`, code, undefined, { cause: error });
}

/** grpc-gateway errors are JSON with `error` or `message`; show the words, not the envelope. */
function errorText(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    const words = parsed.message ?? parsed.error;
    if (typeof words === 'string') return words;
  } catch {
    // not JSON: show it raw
  }
  return text.slice(0, 300);
}
