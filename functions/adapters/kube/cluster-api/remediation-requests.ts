// EtcdRemediationRequest: what a MachineHealthCheck creates (from our template, named after the
// unhealthy Machine, in its namespace, labelled with its Cluster) when it wants the Machine
// remediated, and deletes once the Machine is healthy again. Read here, and its status written.
import { PatchStrategy, setHeaderOptions, type CustomObjectsApi, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { requestEndPhases, type EndingPhase, isIncidentId } from '../../../core/incident/index.ts';
import type { Condition } from '../../../core/kubernetes/index.ts';
import { describeKubeError, isNotFound } from '../api-errors.ts';
import { CLUSTER_NAME_LABEL } from './machines.ts';

export const REQUEST_GROUP = 'etcd-remediator.io';
export const REQUEST_VERSION = 'v1alpha1';
export const REQUEST_PLURAL = 'etcdremediationrequests';
export const REQUESTS_PATH = `/apis/${REQUEST_GROUP}/${REQUEST_VERSION}/${REQUEST_PLURAL}`;

/** Pending, Running and Waiting while the request goes on; an ending's phase (the endings table's) once it ended. */
export type RequestPhase = 'Pending' | 'Running' | 'Waiting' | EndingPhase;

export interface RequestStatus {
  phase: RequestPhase;
  reasonCode?: string;
  message?: string;
  incidentId?: string;
  leaderMove?: string;
  startedAt?: string;
  updatedAt: string;
  completedAt?: string;
  observedGeneration?: number;
  /** metav1.Condition, one per type (request-conditions.ts). */
  conditions?: Condition[];
}

export interface RemediationRequest {
  namespace: string;
  /** The Machine's name: MHC names the request after it. */
  machineName: string;
  uid: string;
  /** The Cluster API Cluster the Machine belongs to (MHC copies its cluster-name label). */
  clusterName?: string;
  reason?: string;
  /** The MachineHealthCheck template it was cloned from (GenerateTemplate's cloned-from-name annotation). */
  templateName?: string;
  createdAt?: string;
  generation?: number;
  /** The Machine's uid and apiVersion, from the owner reference MHC gives the request. */
  machineOwner?: { uid: string; apiVersion: string };
  /** When its deletion was asked (metadata.deletionTimestamp): by its MHC, or by the garbage collector after its Machine. */
  deletingSince?: string;
  /** The watcher's finalizer is on it: its deletion waits until the outcome is written. */
  heldForOutcome: boolean;
  /** Every finalizer on it, ours and others', as read. */
  finalizers?: string[];
  resourceVersion?: string;
  status?: Partial<RequestStatus>;
}

/**
 * The watcher's finalizer on each request: MHC gives a request an ownerReference to its Machine, so
 * the garbage collector deletes it once the Machine we deleted is gone, before the replacement
 * joins; held, the request stays (Terminating) until its outcome is written and can be read.
 */
export const REQUEST_FINALIZER = 'etcd-remediator.io/outcome';

/** GenerateTemplate's annotation on every object cloned from a template (Cluster API TemplateClonedFromNameAnnotation). */
export const CLONED_FROM_NAME_ANNOTATION = 'cluster.x-k8s.io/cloned-from-name';

export type RequestObject = KubernetesObject & { spec?: { reason?: unknown }; status?: Record<string, unknown> };

/** A phase that ends the request (an incident may end while its request goes on: the endings table says which). */
export const isTerminalPhase = (phase: string | undefined): boolean => phase !== undefined && (requestEndPhases as readonly string[]).includes(phase);

/** The status's text fields, read as they are: the watcher compares them with what it would write. */
const SHOWN_TEXT = ['reasonCode', 'message', 'leaderMove', 'startedAt', 'updatedAt', 'completedAt'] as const;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

const isCondition = (value: unknown): value is Condition => {
  const c = value as Partial<Record<keyof Condition, unknown>> | null;
  return typeof c === 'object' && c !== null && typeof c.type === 'string' && typeof c.status === 'string' && typeof c.lastTransitionTime === 'string';
};

/** undefined for an object without a name or namespace (not one MHC made). */
export function toRemediationRequest(object: RequestObject): RemediationRequest | undefined {
  const { metadata } = object;
  const name = metadata?.name;
  const namespace = metadata?.namespace;
  if (!name || !namespace) return undefined;
  const status = object.status ?? {};
  const clusterName = metadata.labels?.[CLUSTER_NAME_LABEL];
  const reason = text(object.spec?.reason);
  const templateName = text(metadata.annotations?.[CLONED_FROM_NAME_ANNOTATION]);
  const createdAt = metadata.creationTimestamp ? new Date(metadata.creationTimestamp).toISOString() : undefined;
  const owner = metadata.ownerReferences?.find((ref) => ref.kind === 'Machine' && ref.name === name && ref.uid);
  const conditions = Array.isArray(status.conditions) ? (status.conditions as unknown[]).filter(isCondition) : [];
  return {
    namespace,
    machineName: name,
    uid: metadata.uid ?? '',
    ...(clusterName ? { clusterName } : {}),
    ...(reason ? { reason } : {}),
    ...(templateName ? { templateName } : {}),
    ...(createdAt ? { createdAt } : {}),
    ...(metadata.generation === undefined ? {} : { generation: metadata.generation }),
    ...(owner ? { machineOwner: { uid: owner.uid, apiVersion: owner.apiVersion } } : {}),
    ...(metadata.deletionTimestamp ? { deletingSince: new Date(metadata.deletionTimestamp).toISOString() } : {}),
    heldForOutcome: metadata.finalizers?.includes(REQUEST_FINALIZER) ?? false,
    ...(metadata.finalizers && metadata.finalizers.length > 0 ? { finalizers: [...metadata.finalizers] } : {}),
    ...(metadata.resourceVersion ? { resourceVersion: metadata.resourceVersion } : {}),
    status: {
      ...(text(status.phase) ? { phase: status.phase as RequestPhase } : {}),
      // Only an id we could have written: anyone with access to the status may put any string there.
      ...(typeof status.incidentId === 'string' && isIncidentId(status.incidentId) ? { incidentId: status.incidentId } : {}),
      ...Object.fromEntries(SHOWN_TEXT.flatMap((key) => (text(status[key]) ? [[key, status[key]]] : []))),
      ...(typeof status.observedGeneration === 'number' ? { observedGeneration: status.observedGeneration } : {}),
      ...(conditions.length > 0 ? { conditions } : {}),
    },
  };
}

export class RequestStatusError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RequestStatusError';
  }
}

export interface RequestClient {
  list(): Promise<KubernetesListObject<RequestObject>>;
  /**
   * Merge-patches the status subresource, `clear` naming the fields an earlier status set that no
   * longer hold; false when the request is gone.
   */
  writeStatus(
    request: Pick<RemediationRequest, 'namespace' | 'machineName'>,
    status: RequestStatus,
    clear?: readonly (keyof RequestStatus)[],
  ): Promise<boolean>;
  /**
   * Adds or removes REQUEST_FINALIZER, the other finalizers kept, at the resourceVersion read (a
   * Conflict is thrown: the caller reads again); false when the request is gone.
   */
  holdForOutcome(
    request: Pick<RemediationRequest, 'namespace' | 'machineName' | 'resourceVersion'>,
    finalizers: readonly string[],
    hold: boolean,
  ): Promise<boolean>;
}

export function createRequestClient(customObjects: CustomObjectsApi): RequestClient {
  const base = { group: REQUEST_GROUP, version: REQUEST_VERSION, plural: REQUEST_PLURAL };
  return {
    list: async () => (await customObjects.listClusterCustomObject(base)) as KubernetesListObject<RequestObject>,
    async holdForOutcome({ namespace, machineName, resourceVersion }, finalizers, hold) {
      const next = hold ? [...new Set([...finalizers, REQUEST_FINALIZER])] : finalizers.filter((f) => f !== REQUEST_FINALIZER);
      const metadata = { finalizers: next, ...(resourceVersion ? { resourceVersion } : {}) };
      try {
        await customObjects.patchNamespacedCustomObject(
          { ...base, namespace, name: machineName, body: { metadata } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw new RequestStatusError(
          `${hold ? 'adding' : 'removing'} the finalizer ${REQUEST_FINALIZER} of EtcdRemediationRequest ${namespace}/${machineName} failed: ${describeKubeError(error)}`,
          { cause: error },
        );
      }
    },
    async writeStatus({ namespace, machineName }, status, clear = []) {
      // A merge patch deletes what it sets to null (RFC 7386).
      const cleared = Object.fromEntries(clear.filter((key) => status[key] === undefined).map((key) => [key, null]));
      try {
        await customObjects.patchNamespacedCustomObjectStatus(
          { ...base, namespace, name: machineName, body: { status: { ...status, ...cleared } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw new RequestStatusError(`writing the status of EtcdRemediationRequest ${namespace}/${machineName} failed: ${describeKubeError(error)}`, {
          cause: error,
        });
      }
    },
  };
}
