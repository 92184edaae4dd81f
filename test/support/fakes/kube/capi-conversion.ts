// Cluster API's conversion between v1beta1 and v1beta2, as its conversion webhooks make it, for the
// four kinds the product and the simulation read: Machine, MachineHealthCheck and Cluster
// (api/core/v1beta1/conversion.go) and KubeadmControlPlane (api/controlplane/kubeadm/v1beta1/
// conversion.go), at kubernetes-sigs/cluster-api ae7ff047. An API server answers every served
// version of an object whatever version it was written in; so does the fake: each object stays in
// the version it was first written in (its storage, which no client sees), and is converted on the
// way out to the version a request names, and on the way in back to its own. What this models:
// - status (every kind): v1beta1's conditions, failureReason and failureMessage are v1beta2's
//   status.deprecated.v1beta1; v1beta1's status.v1beta2 is v1beta2's status (Convert_v1beta1_
//   MachineStatus_To_v1beta2_MachineStatus and its kin); KCP's replica counts move the same way;
//   readiness flags are v1beta2's status.initialization;
// - Machine: status.nodeRef (ObjectReference) is {name} (MachineNodeReference); spec's
//   infrastructureRef and bootstrap.configRef are ContractVersionedObjectReferences {apiGroup, kind,
//   name}; nodeDrainTimeout and its kin are spec.deletion.*Seconds;
// - MachineHealthCheck: unhealthyConditions, unhealthyMachineConditions and nodeStartupTimeout are
//   spec.checks (timeouts in seconds); maxUnhealthy, unhealthyRange and remediationTemplate are
//   spec.remediation (triggerIf, templateRef);
// - Cluster: controlPlaneRef and infrastructureRef as Machine's refs;
// - KubeadmControlPlane: machineTemplate.infrastructureRef is machineTemplate.spec.infrastructureRef;
//   remediationStrategy is spec.remediation (periods in seconds).
// What v1beta2 cannot hold (an ObjectReference's namespace, uid and version) Cluster API keeps in
// its cluster.x-k8s.io/conversion-data annotation; the fake keeps it from the stored object
// instead (restoreLost), with the same effect: a round trip loses nothing.
import { isObject, text, type Json, type JsonObject } from './patch.ts';

export const CAPI_GROUPS: readonly string[] = ['cluster.x-k8s.io', 'controlplane.cluster.x-k8s.io'];
const KINDS: readonly string[] = ['Machine', 'MachineHealthCheck', 'Cluster', 'KubeadmControlPlane'];
type Version = 'v1beta1' | 'v1beta2';

const obj = (value: Json | undefined): JsonObject => (isObject(value) ? value : {});
export const versionOf = (object: JsonObject): string => text(object.apiVersion).split('/')[1] ?? '';
const groupOf = (apiVersion: Json | undefined): string => text(apiVersion).split('/')[0] ?? '';

/** Drops the keys whose value is undefined, and an object left empty, as Go's omitempty does. */
function compact(object: Record<string, Json | undefined>): JsonObject | undefined {
  const kept = Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as JsonObject;
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** Sets or removes `key` (undefined removes it). */
function put(object: JsonObject, key: string, value: Json | undefined): void {
  if (value === undefined) delete object[key];
  else object[key] = value;
}

const GO_UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1, us: 1e-3, µs: 1e-3, ns: 1e-6 };

/** Go's time.ParseDuration for what metav1.Duration holds ("1m30s", "300ms", "2h"), in milliseconds. */
export function goDurationMs(value: string): number {
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/([\d.]+)(h|ms|m|s|us|µs|ns)/g)) total += Number(amount) * GO_UNIT_MS[unit!]!;
  return total;
}

/** A metav1.Duration in whole seconds, as ConvertToSeconds truncates it. */
export function durationSeconds(value: Json | undefined): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return Math.trunc(goDurationMs(value) / 1_000);
}

/** metav1.Duration's JSON for whole seconds, as Go's Duration.String() writes it: "1h0m0s", "1m30s", "45s". */
export function goDuration(seconds: Json | undefined): string | undefined {
  if (typeof seconds !== 'number') return undefined;
  const h = Math.trunc(seconds / 3600);
  const m = Math.trunc((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** corev1.ObjectReference → ContractVersionedObjectReference (ConvertTo fills apiGroup from apiVersion). */
function toContractRef(ref: Json | undefined): JsonObject | undefined {
  if (!isObject(ref)) return undefined;
  return compact({ apiGroup: ref.apiVersion === undefined ? undefined : groupOf(ref.apiVersion), kind: ref.kind, name: ref.name });
}

/** ContractVersionedObjectReference → corev1.ObjectReference; the version is the contract's (v1beta1 here) unless restored. */
function fromContractRef(ref: Json | undefined, namespace: Json | undefined): JsonObject | undefined {
  if (!isObject(ref)) return undefined;
  return compact({ apiVersion: ref.apiGroup === undefined ? undefined : `${text(ref.apiGroup)}/v1beta1`, kind: ref.kind, name: ref.name, namespace });
}

/** v1beta1 status → v1beta2 status: the fields every kind has, and `more` of its own. */
function statusUp(status: JsonObject, deprecatedKeys: readonly string[]): JsonObject {
  const { v1beta2, ...rest } = status;
  const out: JsonObject = { ...rest };
  const deprecated: Record<string, Json | undefined> = {};
  for (const key of ['conditions', 'failureReason', 'failureMessage', ...deprecatedKeys]) {
    deprecated[key] = out[key];
    delete out[key];
  }
  Object.assign(out, obj(v1beta2));
  const v1beta1 = compact(deprecated);
  if (v1beta1) out.deprecated = { v1beta1 };
  return out;
}

/** v1beta2 status → v1beta1 status. */
function statusDown(status: JsonObject, upKeys: readonly string[]): JsonObject {
  const { deprecated, ...rest } = status;
  const out: JsonObject = { ...rest };
  const v1beta2: Record<string, Json | undefined> = {};
  for (const key of ['conditions', ...upKeys]) {
    v1beta2[key] = out[key];
    delete out[key];
  }
  Object.assign(out, obj(obj(deprecated).v1beta1));
  const moved = compact(v1beta2);
  if (moved) out.v1beta2 = moved;
  return out;
}

/** Readiness flags ↔ status.initialization. */
const INITIALIZATION: Record<string, readonly [string, string][]> = {
  Machine: [
    ['bootstrapReady', 'bootstrapDataSecretCreated'],
    ['infrastructureReady', 'infrastructureProvisioned'],
  ],
  Cluster: [
    ['controlPlaneReady', 'controlPlaneInitialized'],
    ['infrastructureReady', 'infrastructureProvisioned'],
  ],
  KubeadmControlPlane: [['initialized', 'controlPlaneInitialized']],
};
/** KCP's replica counts: v1beta1's meanings go to deprecated, status.v1beta2's come up. */
const KCP_DEPRECATED = ['readyReplicas', 'updatedReplicas', 'unavailableReplicas'];
const KCP_UP = ['readyReplicas', 'availableReplicas', 'upToDateReplicas'];

function statusToV1beta2(kind: string, status: JsonObject): JsonObject {
  const out = statusUp(status, kind === 'KubeadmControlPlane' ? KCP_DEPRECATED : []);
  const initialization: Record<string, Json | undefined> = {};
  for (const [flag, field] of INITIALIZATION[kind] ?? []) {
    initialization[field] = out[flag];
    delete out[flag];
  }
  put(out, 'initialization', compact({ ...obj(out.initialization), ...initialization }));
  if (kind === 'Machine' && isObject(out.nodeRef)) out.nodeRef = { name: out.nodeRef.name ?? '' };
  return out;
}

function statusToV1beta1(kind: string, status: JsonObject): JsonObject {
  const out = statusDown(status, kind === 'KubeadmControlPlane' ? KCP_UP : []);
  const initialization = obj(out.initialization);
  delete out.initialization;
  for (const [flag, field] of INITIALIZATION[kind] ?? []) put(out, flag, initialization[field]);
  if (kind === 'Machine' && isObject(out.nodeRef)) out.nodeRef = { apiVersion: 'v1', kind: 'Node', name: out.nodeRef.name ?? '' };
  return out;
}

const MACHINE_TIMEOUTS: readonly [string, string][] = [
  ['nodeDrainTimeout', 'nodeDrainTimeoutSeconds'],
  ['nodeVolumeDetachTimeout', 'nodeVolumeDetachTimeoutSeconds'],
  ['nodeDeletionTimeout', 'nodeDeletionTimeoutSeconds'],
];

const conditionUp = (c: Json): Json => (isObject(c) ? (compact({ type: c.type, status: c.status, timeoutSeconds: durationSeconds(c.timeout) }) ?? {}) : c);
const conditionDown = (c: Json): Json => (isObject(c) ? (compact({ type: c.type, status: c.status, timeout: goDuration(c.timeoutSeconds) ?? '0s' }) ?? {}) : c);

function specToV1beta2(kind: string, spec: JsonObject): JsonObject {
  const out: JsonObject = { ...spec };
  if (kind === 'Machine') {
    put(out, 'infrastructureRef', toContractRef(spec.infrastructureRef));
    if (isObject(spec.bootstrap)) out.bootstrap = compact({ ...spec.bootstrap, configRef: toContractRef(spec.bootstrap.configRef) }) ?? {};
    const deletion: Record<string, Json | undefined> = {};
    for (const [duration, seconds] of MACHINE_TIMEOUTS) {
      deletion[seconds] = durationSeconds(out[duration]);
      delete out[duration];
    }
    put(out, 'deletion', compact({ ...obj(out.deletion), ...deletion }));
  }
  if (kind === 'MachineHealthCheck') {
    const { unhealthyConditions, unhealthyMachineConditions, nodeStartupTimeout, maxUnhealthy, unhealthyRange, remediationTemplate, ...rest } = out;
    const checks = compact({
      unhealthyNodeConditions: Array.isArray(unhealthyConditions) ? unhealthyConditions.map(conditionUp) : undefined,
      unhealthyMachineConditions: Array.isArray(unhealthyMachineConditions) ? unhealthyMachineConditions.map(conditionUp) : undefined,
      nodeStartupTimeoutSeconds: durationSeconds(nodeStartupTimeout),
    });
    const template = isObject(remediationTemplate)
      ? compact({ apiVersion: remediationTemplate.apiVersion, kind: remediationTemplate.kind, name: remediationTemplate.name })
      : undefined;
    const remediation = compact({ triggerIf: compact({ unhealthyLessThanOrEqualTo: maxUnhealthy, unhealthyInRange: unhealthyRange }), templateRef: template });
    return compact({ ...rest, checks, remediation }) ?? {};
  }
  if (kind === 'Cluster') {
    put(out, 'controlPlaneRef', toContractRef(spec.controlPlaneRef));
    put(out, 'infrastructureRef', toContractRef(spec.infrastructureRef));
  }
  if (kind === 'KubeadmControlPlane') {
    if (isObject(spec.machineTemplate)) {
      const { infrastructureRef, ...template } = spec.machineTemplate;
      out.machineTemplate = compact({ ...template, spec: compact({ ...obj(template.spec), infrastructureRef: toContractRef(infrastructureRef) }) }) ?? {};
    }
    const { remediationStrategy, ...rest } = out;
    if (isObject(remediationStrategy)) {
      const { retryPeriod, minHealthyPeriod, ...strategy } = remediationStrategy;
      return {
        ...rest,
        remediation:
          compact({ ...strategy, retryPeriodSeconds: durationSeconds(retryPeriod), minHealthyPeriodSeconds: durationSeconds(minHealthyPeriod) }) ?? {},
      };
    }
  }
  return out;
}

function specToV1beta1(kind: string, spec: JsonObject, namespace: Json | undefined): JsonObject {
  const out: JsonObject = { ...spec };
  if (kind === 'Machine') {
    put(out, 'infrastructureRef', fromContractRef(spec.infrastructureRef, namespace));
    if (isObject(spec.bootstrap)) out.bootstrap = compact({ ...spec.bootstrap, configRef: fromContractRef(spec.bootstrap.configRef, namespace) }) ?? {};
    const deletion = obj(out.deletion);
    delete out.deletion;
    for (const [duration, seconds] of MACHINE_TIMEOUTS) put(out, duration, goDuration(deletion[seconds]));
  }
  if (kind === 'MachineHealthCheck') {
    const { checks, remediation, ...rest } = out;
    const c = obj(checks);
    const r = obj(remediation);
    const trigger = obj(r.triggerIf);
    const template = isObject(r.templateRef)
      ? compact({ apiVersion: r.templateRef.apiVersion, kind: r.templateRef.kind, name: r.templateRef.name, namespace })
      : undefined;
    return (
      compact({
        ...rest,
        unhealthyConditions: Array.isArray(c.unhealthyNodeConditions) ? c.unhealthyNodeConditions.map(conditionDown) : undefined,
        unhealthyMachineConditions: Array.isArray(c.unhealthyMachineConditions) ? c.unhealthyMachineConditions.map(conditionDown) : undefined,
        nodeStartupTimeout: goDuration(c.nodeStartupTimeoutSeconds),
        maxUnhealthy: trigger.unhealthyLessThanOrEqualTo,
        unhealthyRange: trigger.unhealthyInRange,
        remediationTemplate: template,
      }) ?? {}
    );
  }
  if (kind === 'Cluster') {
    put(out, 'controlPlaneRef', fromContractRef(spec.controlPlaneRef, namespace));
    put(out, 'infrastructureRef', fromContractRef(spec.infrastructureRef, namespace));
  }
  if (kind === 'KubeadmControlPlane') {
    if (isObject(spec.machineTemplate)) {
      const template = spec.machineTemplate;
      const { infrastructureRef, ...templateSpec } = obj(template.spec);
      const { spec: _spec, ...rest } = template;
      out.machineTemplate =
        compact({
          ...rest,
          ...(Object.keys(templateSpec).length > 0 ? { spec: templateSpec } : {}),
          infrastructureRef: fromContractRef(infrastructureRef, namespace),
        }) ?? {};
    }
    const { remediation, ...rest } = out;
    if (isObject(remediation)) {
      const { retryPeriodSeconds, minHealthyPeriodSeconds, ...strategy } = remediation;
      return {
        ...rest,
        remediationStrategy: compact({ ...strategy, retryPeriod: goDuration(retryPeriodSeconds), minHealthyPeriod: goDuration(minHealthyPeriodSeconds) }) ?? {},
      };
    }
  }
  return out;
}

/** Whether objects of this group and kind are converted between versions. */
export const converts = (group: string, kind: Json | undefined): boolean => CAPI_GROUPS.includes(group) && KINDS.includes(text(kind));

/** `object` in `version`, as Cluster API's webhook converts it; the object itself when it is in that version already, or no Cluster API kind. */
export function convertCapi(object: JsonObject, version: string): JsonObject {
  const group = groupOf(object.apiVersion);
  const from = versionOf(object);
  if (!converts(group, object.kind) || from === version || (version !== 'v1beta1' && version !== 'v1beta2')) return object;
  const kind = text(object.kind);
  const to: Version = version;
  const namespace = obj(object.metadata).namespace;
  const out: JsonObject = { ...structuredClone(object), apiVersion: `${group}/${to}` };
  if (isObject(object.spec))
    out.spec = to === 'v1beta2' ? specToV1beta2(kind, structuredClone(object.spec)) : specToV1beta1(kind, structuredClone(object.spec), namespace);
  if (isObject(object.status))
    out.status = to === 'v1beta2' ? statusToV1beta2(kind, structuredClone(object.status)) : statusToV1beta1(kind, structuredClone(object.status));
  return out;
}

/**
 * What a conversion to v1beta2 and back dropped, put back from the object as stored: a reference's
 * apiVersion, namespace and uid while it still names the same kind and name (Cluster API keeps them
 * in its conversion-data annotation). `converted` is in `stored`'s version.
 */
export function restoreLost(converted: JsonObject, stored: JsonObject | undefined): JsonObject {
  if (!stored || versionOf(stored) !== 'v1beta1' || versionOf(converted) !== 'v1beta1') return converted;
  const same = (a: Json | undefined, b: Json | undefined): boolean => isObject(a) && isObject(b) && a.kind === b.kind && a.name === b.name;
  const restore = (holder: JsonObject, was: JsonObject, key: string): void => {
    if (same(holder[key], was[key])) holder[key] = was[key]!;
  };
  const spec = obj(converted.spec);
  const storedSpec = obj(stored.spec);
  for (const key of ['infrastructureRef', 'controlPlaneRef', 'remediationTemplate']) restore(spec, storedSpec, key);
  if (isObject(spec.bootstrap)) restore(spec.bootstrap, obj(storedSpec.bootstrap), 'configRef');
  if (isObject(spec.machineTemplate)) restore(spec.machineTemplate, obj(storedSpec.machineTemplate), 'infrastructureRef');
  const status = obj(converted.status);
  if (isObject(status.nodeRef) && isObject(obj(stored.status).nodeRef)) restore(status, obj(stored.status), 'nodeRef');
  return converted;
}
