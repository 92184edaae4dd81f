// Cluster API's skip-remediation annotation on a Machine (MachineSkipRemediationAnnotation): while
// it is there, MachineHealthCheck leaves the Machine out of its targets (shouldSkipRemediation).
// A request left Blocked would otherwise stop MHC from creating requests for its other unhealthy
// Machines: patchUnhealthyTargets returns at the first unhealthy Machine that already has one.
// Needs get and patch on machines.
import { type CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { MachineApiVersion } from '../../../ports/kube-access.ts';
import { describeKubeError, isNotFound } from '../api-errors.ts';
import { CAPI_GROUP, fieldsOf as fields, MACHINES_PLURAL } from './machines.ts';

export const SKIP_REMEDIATION_ANNOTATION = 'cluster.x-k8s.io/skip-remediation';

export interface MachineKey {
  namespace: string;
  name: string;
}

// Stated here, not built elsewhere: the RBAC check (test/infra/kube-calls.ts) reads each call's group and plural.
const MACHINE = { group: CAPI_GROUP, plural: MACHINES_PLURAL } as const;

/** The annotation's value; undefined when it is not there; null when the Machine is gone. */
export async function skipRemediationOf(customObjects: CustomObjectsApi, version: MachineApiVersion, machine: MachineKey): Promise<string | undefined | null> {
  try {
    const object = fields(await customObjects.getNamespacedCustomObject({ ...MACHINE, version, ...machine }));
    const value = fields(fields(object.metadata).annotations)[SKIP_REMEDIATION_ANNOTATION];
    return typeof value === 'string' ? value : undefined;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw new Error(`reading Machine ${machine.name} in namespace ${machine.namespace} failed: ${describeKubeError(error)}`, { cause: error });
  }
}

/** Sets the annotation to `why`; false when the Machine is gone. */
export async function markSkipRemediation(customObjects: CustomObjectsApi, version: MachineApiVersion, machine: MachineKey, why: string): Promise<boolean> {
  try {
    await customObjects.patchNamespacedCustomObject(
      { ...MACHINE, version, ...machine, body: { metadata: { annotations: { [SKIP_REMEDIATION_ANNOTATION]: why } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw new Error(`annotating Machine ${machine.name} in namespace ${machine.namespace} ${SKIP_REMEDIATION_ANNOTATION} failed: ${describeKubeError(error)}`, {
      cause: error,
    });
  }
}
