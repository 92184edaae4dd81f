// Kubernetes `Status` error bodies as the API server writes them (apiserver
// pkg/endpoints/handlers/responsewriters/status.go, apimachinery pkg/api/errors/errors.go).

/** metav1.StatusCause as it serialises (its Type is the `reason` field). */
export type StatusCause = { reason: string; message: string; field: string };

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason?: string;
  details?: { name: string; group?: string; kind: string; causes?: StatusCause[] };
  code: number;
}

/** An error the fake answers with: an HTTP status and a JSON Status body. */
export class KubeFakeError extends Error {
  readonly status: KubeStatus;
  constructor(status: KubeStatus) {
    super(status.message);
    this.name = 'KubeFakeError';
    this.status = status;
  }
}

/** A Status about one named object, as apimachinery's NewNotFound, NewAlreadyExists, NewConflict write it. */
function aboutObject(code: number, reason: string, resource: string, group: string, name: string, message: (qualified: string) => string): KubeFakeError {
  const qualified = group === '' ? resource : `${resource}.${group}`;
  return new KubeFakeError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: message(`${qualified} "${name}"`),
    reason,
    details: group === '' ? { name, kind: resource } : { name, group, kind: resource },
    code,
  });
}

/** `<resource>[.<group>] "<name>" not found`, 404, reason NotFound. */
export function notFound(resource: string, group: string, name: string): KubeFakeError {
  return aboutObject(404, 'NotFound', resource, group, name, (object) => `${object} not found`);
}

/** `<resource>[.<group>] "<name>" already exists`, 409, reason AlreadyExists. */
export function alreadyExists(resource: string, group: string, name: string): KubeFakeError {
  return aboutObject(409, 'AlreadyExists', resource, group, name, (object) => `${object} already exists`);
}

/** `Operation cannot be fulfilled on <resource>[.<group>] "<name>": <why>`, 409, reason Conflict. */
export function conflict(resource: string, group: string, name: string, why: string): KubeFakeError {
  return aboutObject(409, 'Conflict', resource, group, name, (object) => `Operation cannot be fulfilled on ${object}: ${why}`);
}

/**
 * errors.NewInvalid: `<Kind>[.<group>] "<name>" is invalid: <causes>`, 422, reason Invalid. The
 * causes' texts as field.ErrorList.ToAggregate joins them: duplicates go, one stands alone,
 * several are bracketed.
 */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): KubeFakeError {
  const texts = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  const qualified = group === '' ? kind : `${kind}.${group}`;
  return new KubeFakeError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${qualified} "${name}" is invalid: ${texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`}`,
    reason: 'Invalid',
    details: { name, group, kind, causes },
    code: 422,
  });
}

/** errors.NewForbidden's shape for an admission refusal: 403, reason Forbidden, the plugin's words. */
export function forbidden(resource: string, group: string, name: string, why: string): KubeFakeError {
  return aboutObject(403, 'Forbidden', resource, group, name, (object) => `${object} is forbidden: ${why}`);
}

export function badRequest(message: string): KubeFakeError {
  return new KubeFakeError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'BadRequest', code: 400 });
}

/** A plain Go error through ErrorToAPIStatus: 500, no reason (StatusReasonUnknown). */
export function internal(message: string): KubeFakeError {
  return new KubeFakeError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}
