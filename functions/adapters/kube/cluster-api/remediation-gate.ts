// Cluster API's word on a request, read from the management cluster: its Cluster, its Machine and
// the MachineHealthChecks of that Cluster (remediation-allowed.ts judges them). One look reads each
// Cluster and its MHC list once, however many of its requests are looked at in it.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { MachineApiVersion } from '../../../ports/kube-access.ts';
import { describeKubeError, isNotFound } from '../api-errors.ts';
import { CAPI_GROUP, MACHINES_PLURAL } from './machines.ts';
import { competingHealthChecksOf, healthChecksOf, holdOf, type Hold, type KubeObjectShape } from './remediation-allowed.ts';
import type { RemediationRequest } from './remediation-requests.ts';

export type Gate =
  | { kind: 'allowed' }
  | { kind: 'held'; hold: Hold }
  /** Something could not be read: no answer, so nothing is reported on it. */
  | { kind: 'unknown'; message: string };

/** Looks at one request; a look shares its reads among the requests of one Cluster. */
export type GateLook = (request: Pick<RemediationRequest, 'namespace' | 'machineName' | 'clusterName' | 'templateName'>) => Promise<Gate>;

export interface RemediationGate {
  /** A fresh look: what it reads is read again, once, by the next. */
  look(): GateLook;
}

class Unreadable extends Error {}

const labelsOf = (object: KubeObjectShape | undefined): Record<string, string> => {
  const labels = object?.metadata?.labels;
  return typeof labels === 'object' && labels !== null
    ? Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string'))
    : {};
};

export function createRemediationGate(customObjects: CustomObjectsApi, version: MachineApiVersion = 'v1beta1'): RemediationGate {
  const at = (plural: string, namespace: string) => ({ group: CAPI_GROUP, version, plural, namespace });

  /** undefined when there is no such object (or no such resource): nothing there pauses anything. */
  async function read<T>(what: string, call: () => Promise<unknown>, absent: T): Promise<T> {
    try {
      return (await call()) as T;
    } catch (error) {
      if (isNotFound(error)) return absent;
      throw new Unreadable(`${what} could not be read (${describeKubeError(error)})`);
    }
  }

  return {
    look() {
      const perCluster = new Map<string, Promise<{ cluster: KubeObjectShape | undefined; mhcs: KubeObjectShape[] }>>();
      const clusterOf = (namespace: string, name: string) => {
        const key = `${namespace}/${name}`;
        let found = perCluster.get(key);
        if (!found) {
          found = Promise.all([
            read<KubeObjectShape | undefined>(
              `Cluster ${key}`,
              () => customObjects.getNamespacedCustomObject({ ...at('clusters', namespace), name }),
              undefined,
            ),
            read<{ items?: KubeObjectShape[] } | undefined>(
              `the MachineHealthChecks in namespace ${namespace} (the watcher needs list on machinehealthchecks.cluster.x-k8s.io: infra/kubernetes/deploy/rbac.yaml)`,
              () => customObjects.listNamespacedCustomObject(at('machinehealthchecks', namespace)),
              undefined,
            ),
          ]).then(([cluster, list]) => ({ cluster, mhcs: list?.items ?? [] }));
          perCluster.set(key, found);
        }
        return found;
      };
      return async (request) => {
        if (!request.clusterName) return { kind: 'allowed' };
        try {
          const [{ cluster, mhcs }, machine] = await Promise.all([
            clusterOf(request.namespace, request.clusterName),
            read<KubeObjectShape | undefined>(
              `Machine ${request.namespace}/${request.machineName}`,
              () => customObjects.getNamespacedCustomObject({ ...at(MACHINES_PLURAL, request.namespace), name: request.machineName }),
              undefined,
            ),
          ]);
          const watched = {
            clusterName: request.clusterName,
            labels: labelsOf(machine),
            ...(request.templateName ? { templateName: request.templateName } : {}),
          };
          const hold = holdOf({
            ...(cluster ? { cluster } : {}),
            ...(machine ? { machine } : {}),
            healthChecks: machine ? healthChecksOf(mhcs, watched) : [],
            // Every MHC of this Machine, whichever template the request came from: one that hands it to KCP competes.
            competing: machine ? competingHealthChecksOf(mhcs, { clusterName: request.clusterName, labels: watched.labels }) : [],
          });
          return hold ? { kind: 'held', hold } : { kind: 'allowed' };
        } catch (error) {
          if (error instanceof Unreadable) return { kind: 'unknown', message: error.message };
          throw error;
        }
      };
    },
  };
}
