// Injected failures for the kube fake: the next matching REST requests are answered with an error
// instead of being served, as a real API server (or the network to it) fails now and then. The
// answer is the Status body the API server writes, so client-node throws its real ApiException.
import type { KubeStatus } from './status.ts';

export interface FaultSpec {
  /** The HTTP method to match; any when left out. */
  method?: string;
  /** Matched against the request's path, without the query. */
  path: RegExp;
  /** Matched against the request body, to pick one write among several (e.g. /"phase":"Completed"/). */
  body?: RegExp;
  /** How many matching requests fail (default 1); the ones after are served as usual. */
  times?: number;
  /** The HTTP code of the Status answer (default 500), or 'reset' to drop the connection unanswered. */
  status?: number | 'reset';
  /** The Status reason; by default the one apimachinery gives the code (InternalError for 500 …). */
  reason?: string;
  message?: string;
}

/** How many times an injected failure has fired so far. */
export interface FaultCounter {
  readonly fired: number;
  /** Disarms it: the next matching requests are served (for a fault armed with a large `times`). */
  clear(): void;
}

export type FaultAnswer = { reset: true } | { reset: false; code: number; body: KubeStatus };

// apimachinery pkg/api/errors: the reason each New… constructor puts with its code.
const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

interface Armed {
  spec: FaultSpec;
  left: number;
  fired: number;
}

export class FaultInjector {
  private readonly armed: Armed[] = [];

  add(spec: FaultSpec): FaultCounter {
    const armed: Armed = { spec, left: spec.times ?? 1, fired: 0 };
    this.armed.push(armed);
    return {
      get fired() {
        return armed.fired;
      },
      clear() {
        armed.left = 0;
      },
    };
  }

  /** The answer for this request when an armed fault matches it (and spends one of its times). */
  take(method: string, path: string, body: string): FaultAnswer | undefined {
    const hit = this.armed.find(
      ({ spec, left }) =>
        left > 0 && (spec.method === undefined || spec.method === method) && spec.path.test(path) && (spec.body === undefined || spec.body.test(body)),
    );
    if (!hit) return undefined;
    hit.left -= 1;
    hit.fired += 1;
    const { status = 500 } = hit.spec;
    if (status === 'reset') return { reset: true };
    const reason = hit.spec.reason ?? REASONS[status];
    const message = hit.spec.message ?? `injected failure: HTTP ${status}`;
    return {
      reset: false,
      code: status,
      body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, ...(reason ? { reason } : {}), code: status },
    };
  }
}
