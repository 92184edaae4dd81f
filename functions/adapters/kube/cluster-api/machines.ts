// Cluster API Machines read through client-node's CustomObjectsApi. v1beta1 and v1beta2 both
// put the Node's name at status.nodeRef.name (v1beta2 keeps only `name` in its MachineNodeReference),
// so one defensive parser reads either version.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { MachineApiVersion } from '../../../ports/kube-access.ts';
import { describeKubeError, isNotFound } from '../api-errors.ts';
import { withSignal } from '../signal.ts';

export const CAPI_GROUP = 'cluster.x-k8s.io';
export const MACHINES_PLURAL = 'machines';
/** CAPI labels every Machine with its Cluster's name. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/**
 * CAPI's MachineControlPlaneLabel: the control plane provider (KCP) sets it, with an empty value,
 * on every Machine of the control plane; worker Machines never carry it.
 */
export const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';

/** v1beta1 is served by every CAPI release so far; v1beta2 from CAPI 1.11 on. */
export type { MachineApiVersion } from '../../../ports/kube-access.ts';

export interface MachineRef {
  name: string;
  namespace: string;
  /** status.nodeRef.name: unset until the Node joined. */
  nodeName?: string;
  /** A deletionTimestamp is set: CAPI is already draining and deleting it. */
  deleting: boolean;
  uid: string;
  /** It carries the control-plane label: only such a Machine runs an etcd member. */
  controlPlane: boolean;
  /**
   * Its NodeReady condition as Cluster API's Machine controller mirrors the Node's Ready
   * (machine_controller_status.go; status.conditions in v1beta2, status.v1beta2.conditions when
   * read as v1beta1); undefined when Cluster API wrote none (before v1.9).
   */
  nodeReady?: { status: string; reason?: string; message?: string };
  /**
   * Its UpToDate condition (Cluster API v1.9 on; KubeadmControlPlane counts upToDateReplicas from
   * it): false when the control plane's rollout replaces it; undefined when none was written.
   */
  upToDate?: boolean;
}

type Fields = Record<string, unknown>;
/** An object's fields as read from the API, or none when it is not an object: the defensive reading every Cluster API object gets here. */
export const fieldsOf = (value: unknown): Fields => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : {});

/** A version given, or how to find it when it is needed (machine-api-version.ts). */
export type MachineApiSource = MachineApiVersion | (() => Promise<MachineApiVersion>);

export const resolveMachineApi = async (source: MachineApiSource): Promise<MachineApiVersion> => (typeof source === 'function' ? source() : source);

export interface MachineCallOptions {
  signal?: AbortSignal;
}

export interface MachineReader {
  /** undefined when the Machine does not exist. */
  machineByName(namespace: string, name: string, options?: MachineCallOptions): Promise<MachineRef | undefined>;
  /**
   * The cluster's control-plane Machines, selected by the API server (cluster-name and
   * control-plane labels): a cluster's hundreds of worker Machines are never read.
   */
  listControlPlaneMachines(namespace: string, options?: MachineCallOptions): Promise<MachineRef[]>;
  /** The cluster's control-plane Machine whose nodeRef names the node; undefined when none does. */
  machineOfNode(namespace: string, nodeName: string, options?: MachineCallOptions): Promise<MachineRef | undefined>;
}

export interface MachineReaderOptions {
  customObjects: CustomObjectsApi;
  clusterName: string;
  /** Given, or found on first need (machine-api-version.ts); v1beta1 when unset. */
  version?: MachineApiSource;
}

export class MachineReadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MachineReadError';
  }
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

function hasLabel(object: unknown, label: string): boolean {
  const labels = field(field(object, 'metadata'), 'labels');
  return typeof labels === 'object' && labels !== null && Object.hasOwn(labels, label);
}

function stringAt(value: unknown, ...path: string[]): string | undefined {
  const found = path.reduce<unknown>((current, key) => field(current, key), value);
  return typeof found === 'string' && found !== '' ? found : undefined;
}

/** A condition of the object, from status.conditions (v1beta2) or status.v1beta2.conditions (read as v1beta1). */
function conditionOf(object: unknown, type: string): unknown {
  const inV1beta1 = field(field(field(object, 'status'), 'v1beta2'), 'conditions');
  const own = field(field(object, 'status'), 'conditions');
  const conditions: unknown[] = [...(Array.isArray(inV1beta1) ? (inV1beta1 as unknown[]) : []), ...(Array.isArray(own) ? (own as unknown[]) : [])];
  return conditions.find((c) => field(c, 'type') === type);
}

function nodeReadyOf(object: unknown): MachineRef['nodeReady'] {
  const ready = conditionOf(object, 'NodeReady');
  const status = stringAt(ready, 'status');
  if (status === undefined) return undefined;
  const reason = stringAt(ready, 'reason');
  const message = stringAt(ready, 'message');
  return { status, ...(reason === undefined ? {} : { reason }), ...(message === undefined ? {} : { message }) };
}

function upToDateOf(object: unknown): boolean | undefined {
  const status = stringAt(conditionOf(object, 'UpToDate'), 'status');
  return status === 'True' ? true : status === 'False' ? false : undefined;
}

/** A Machine object from the API, or undefined when it lacks a name (not a Machine). */
export function toMachineRef(object: unknown, fallbackNamespace: string): MachineRef | undefined {
  const name = stringAt(object, 'metadata', 'name');
  if (name === undefined) return undefined;
  const nodeName = stringAt(object, 'status', 'nodeRef', 'name');
  const nodeReady = nodeReadyOf(object);
  const upToDate = upToDateOf(object);
  return {
    name,
    namespace: stringAt(object, 'metadata', 'namespace') ?? fallbackNamespace,
    ...(nodeName === undefined ? {} : { nodeName }),
    deleting: stringAt(object, 'metadata', 'deletionTimestamp') !== undefined,
    uid: stringAt(object, 'metadata', 'uid') ?? '',
    controlPlane: hasLabel(object, CONTROL_PLANE_LABEL),
    ...(nodeReady === undefined ? {} : { nodeReady }),
    ...(upToDate === undefined ? {} : { upToDate }),
  };
}

export function createMachineReader({ customObjects, clusterName, version = 'v1beta1' }: MachineReaderOptions): MachineReader {
  const base = { group: CAPI_GROUP, plural: MACHINES_PLURAL };
  async function listControlPlaneMachines(namespace: string, options: MachineCallOptions = {}): Promise<MachineRef[]> {
    // `key` alone is the selector's existence test: the label's value is empty.
    const labelSelector = `${CLUSTER_NAME_LABEL}=${clusterName},${CONTROL_PLANE_LABEL}`;
    let list: unknown;
    try {
      list = await customObjects.listNamespacedCustomObject(
        { ...base, version: await resolveMachineApi(version), namespace, labelSelector },
        withSignal(options.signal),
      );
    } catch (error) {
      throw new MachineReadError(`listing the control-plane Machines of cluster ${clusterName} in namespace ${namespace} failed: ${describeKubeError(error)}`, {
        cause: error,
      });
    }
    const items = field(list, 'items');
    return (Array.isArray(items) ? items : []).flatMap((item) => toMachineRef(item, namespace) ?? []);
  }

  return {
    async machineByName(namespace, name, options = {}) {
      try {
        const object: unknown = await customObjects.getNamespacedCustomObject(
          { ...base, version: await resolveMachineApi(version), namespace, name },
          withSignal(options.signal),
        );
        return toMachineRef(object, namespace);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw new MachineReadError(`reading Machine ${name} in namespace ${namespace} failed: ${describeKubeError(error)}`, { cause: error });
      }
    },
    listControlPlaneMachines,
    async machineOfNode(namespace, nodeName, options = {}) {
      const machines = await listControlPlaneMachines(namespace, options).catch((error: unknown) => {
        throw error instanceof MachineReadError
          ? new MachineReadError(`${error.message} (looking for the Machine of node ${nodeName})`, { cause: error })
          : error;
      });
      return machines.find((machine) => machine.nodeName === nodeName);
    },
  };
}
