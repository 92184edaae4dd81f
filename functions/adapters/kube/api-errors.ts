// What a failed client-node call says. client-node throws ApiException with the HTTP code and
// the raw body; the API server's own sentence is the Status `message` inside that body.
import { ApiException } from '@kubernetes/client-node';

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

/** 409 Conflict: a write at a resourceVersion that is no longer the stored one (or a failed precondition). */
export function isConflict(error: unknown): boolean {
  return error instanceof ApiException && error.code === 409;
}

function statusMessage(body: unknown): string | undefined {
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body.trim() || undefined;
    }
  }
  if (typeof parsed === 'object' && parsed !== null && 'message' in parsed && typeof parsed.message === 'string') return parsed.message;
  return undefined;
}

/** "HTTP 500: <Status message>" for an API error; otherwise the message, with its cause's (fetch
 * says only "fetch failed" and puts ECONNREFUSED in the cause). */
export function describeKubeError(error: unknown): string {
  if (error instanceof ApiException) {
    const message = statusMessage(error.body);
    return message ? `HTTP ${error.code}: ${message}` : `HTTP ${error.code}`;
  }
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}
