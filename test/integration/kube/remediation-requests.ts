// EtcdRemediationRequests for the watcher's tests: created as MachineHealthCheck creates them
// (GenerateTemplate: named after the Machine, in its namespace, labelled with its Cluster), their
// status read back through client-node as the API server stored it, and their phases as they change.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION, type RequestStatus } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { isObject } from '../../support/fakes/kube/patch.ts';
import type { ObjectStore } from '../../support/fakes/kube/store.ts';

/** spec.reason as a MachineHealthCheck's remediation gives it for a Node not Ready. */
export const MHC_REASON = 'Machine unhealthy: Node not Ready for 5m';

/** A status as read back: any field may be missing until the watcher writes it. */
export type StatusSeen = Partial<RequestStatus>;

/** What a request says besides its Machine and Cluster. */
export interface RequestExtras {
  /** spec.reason; the spec is empty without it. */
  reason?: string;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
}

export interface Requests {
  create(machine: string, cluster: string, extras?: RequestExtras): Promise<void>;
  remove(machine: string): Promise<void>;
  /** The request's status now; undefined before the watcher wrote one. */
  statusOf(machine: string): Promise<StatusSeen | undefined>;
  /** Waits for a status `wanted` accepts, and returns it. */
  statusWith(machine: string, wanted: (status: StatusSeen) => boolean, what: string, wait?: { timeoutMs?: number; intervalMs?: number }): Promise<StatusSeen>;
}

/** The requests of one namespace, through the API server `config` reaches. */
export function requestsIn(config: KubeConfig, namespace: string): Requests {
  const objects = config.makeApiClient(CustomObjectsApi);
  const coordinates = { group: REQUEST_GROUP, version: REQUEST_VERSION, namespace, plural: REQUEST_PLURAL };
  const statusOf = async (machine: string): Promise<StatusSeen | undefined> =>
    ((await objects.getNamespacedCustomObject({ ...coordinates, name: machine })) as { status?: StatusSeen }).status;
  return {
    async create(machine, cluster, { reason, annotations, ownerReferences } = {}) {
      await objects.createNamespacedCustomObject({
        ...coordinates,
        body: {
          apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`,
          kind: 'EtcdRemediationRequest',
          metadata: {
            name: machine,
            namespace,
            labels: { 'cluster.x-k8s.io/cluster-name': cluster },
            ...(annotations ? { annotations } : {}),
            ...(ownerReferences ? { ownerReferences } : {}),
          },
          spec: reason === undefined ? {} : { reason },
        },
      });
    },
    async remove(machine) {
      await objects.deleteNamespacedCustomObject({ ...coordinates, name: machine });
    },
    statusOf,
    statusWith: (machine, wanted, what, { timeoutMs = 10_000, intervalMs } = {}) =>
      waitFor(
        async () => {
          const status = await statusOf(machine);
          return status && wanted(status) ? status : undefined;
        },
        { timeoutMs, what, ...(intervalMs === undefined ? {} : { intervalMs }) },
      ),
  };
}

/** The phases of the request named `machine` as the API server stores them, in order, repeats dropped. */
export function recordPhases(store: ObjectStore, machine: string): { phases: string[]; stop: () => void } {
  const phases: string[] = [];
  const stop = store.subscribe(({ resource, object }) => {
    const phase = isObject(object.status) ? object.status.phase : undefined;
    if (
      resource.plural === REQUEST_PLURAL &&
      isObject(object.metadata) &&
      object.metadata.name === machine &&
      typeof phase === 'string' &&
      phases.at(-1) !== phase
    )
      phases.push(phase);
  });
  return { phases, stop };
}
