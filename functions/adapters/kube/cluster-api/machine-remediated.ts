// Writes the Machine's ExternallyRemediated condition (api/core/v1beta2 machine_types.go: MHC sets
// it False, WaitingForRemediation, when it creates the request; the external remediator updates it).
// v1beta2 keeps it in status.conditions; a v1beta1 read carries v1beta2 conditions in
// status.v1beta2.conditions. A merge patch replaces a whole list, so the list is read, the one
// condition replaced, and written back at the resourceVersion read; a write that lost a race to
// another writer (409 Conflict) is made again from a fresh read, three tries in all. Needs get on
// machines and patch on machines/status.
import { type CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Condition } from '../../../core/kubernetes/index.ts';
import type { MachineApiVersion } from '../../../ports/kube-access.ts';
import { describeKubeError, isConflict, isNotFound } from '../api-errors.ts';
import { CAPI_GROUP, fieldsOf as fields, MACHINES_PLURAL } from './machines.ts';

export type ConditionWrite = 'written' | 'unchanged' | 'gone';

const TRIES = 3;

export async function writeMachineCondition(
  customObjects: CustomObjectsApi,
  version: MachineApiVersion,
  machine: { namespace: string; name: string },
  condition: Omit<Condition, 'observedGeneration'>,
): Promise<ConditionWrite> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeOnce(customObjects, version, machine, condition);
    } catch (error) {
      if (attempt >= TRIES || !isConflict(error)) {
        const where = `Machine ${machine.name} in namespace ${machine.namespace}`;
        throw new Error(`writing the ${condition.type} condition of ${where} failed: ${describeKubeError(error)}`, { cause: error });
      }
    }
  }
}

/** One read and one write at the version read; an API error is thrown as it came. */
async function writeOnce(
  customObjects: CustomObjectsApi,
  version: MachineApiVersion,
  machine: { namespace: string; name: string },
  condition: Omit<Condition, 'observedGeneration'>,
): Promise<ConditionWrite> {
  // Stated here, not built elsewhere: the RBAC check (test/infra/kube-calls.ts) reads each call's group and plural.
  const coordinates = { group: CAPI_GROUP, plural: MACHINES_PLURAL, version, namespace: machine.namespace, name: machine.name };
  let object: Record<string, unknown>;
  try {
    object = fields(await customObjects.getNamespacedCustomObject(coordinates));
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
  // A Machine being deleted keeps what the actuator said as it deleted it: a later (or late) status
  // of the request would only say less.
  if (fields(object.metadata).deletionTimestamp !== undefined) return 'unchanged';
  const status = fields(object.status);
  const holder = version === 'v1beta1' ? fields(status.v1beta2) : status;
  const conditions = (Array.isArray(holder.conditions) ? holder.conditions : []).map(fields);
  const before = conditions.find((c) => c.type === condition.type);
  if (before && before.status === condition.status && before.reason === condition.reason && before.message === condition.message) return 'unchanged';
  // As meta.SetStatusCondition: the transition time moves only when the status does.
  const lastTransitionTime =
    before && before.status === condition.status && typeof before.lastTransitionTime === 'string' ? before.lastTransitionTime : condition.lastTransitionTime;
  const next = [...conditions.filter((c) => c !== before), { ...condition, lastTransitionTime }];
  const resourceVersion = fields(object.metadata).resourceVersion;
  const patch = version === 'v1beta1' ? { status: { v1beta2: { conditions: next } } } : { status: { conditions: next } };
  try {
    await customObjects.patchNamespacedCustomObjectStatus(
      { ...coordinates, body: { ...patch, metadata: { resourceVersion } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    return 'written';
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
}
