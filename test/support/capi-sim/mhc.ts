// The MachineHealthCheck controller (core/reconcilers/machinehealthcheck at ae7ff047), one round:
// its targets are the Machines its selector and cluster-name select, less paused ones and those
// annotated skip-remediation (getTargetsFromMHC, shouldSkipRemediation); a target needs remediation
// when annotated remediate-machine, when its Node was deleted, or when a Node condition has held an
// unhealthy status past its timeout (needsRemediation, nodeChecks). Too many unhealthy for
// maxUnhealthy / unhealthyRange short-circuits: RemediationAllowed False, TooManyUnhealthy, nothing
// created or deleted. Otherwise each unhealthy target gets an external request cloned from the
// template as GenerateTemplate does, or, without a template, OwnerRemediated False for its owner
// (KCP); patchUnhealthyTargets returns at the first target whose request already exists. A healthy
// target's request is deleted (patchHealthyTargets).
import type { Json, JsonObject } from '../fakes/kube/patch.ts';
import { isObject, text } from '../fakes/kube/patch.ts';
import { metadataOf, resourceType } from '../fakes/kube/store.ts';
import { goDurationMs } from '../fakes/kube/capi-conversion.ts';
import {
  CLONED_FROM_GROUP_KIND,
  CLONED_FROM_NAME,
  CLUSTER_NAME_LABEL,
  MACHINES,
  MHCS,
  NODES,
  PAUSED_ANNOTATION,
  SKIP_REMEDIATION,
  annotationsOf,
  conditionOf,
  isDeleting,
  labelsOf,
  nameOf,
  namespaceOf,
  nodeCondition,
  nodeRefOf,
  withCondition,
} from './capi-objects.ts';
import type { SimContext } from './sim-context.ts';

const REMEDIATE_MACHINE = 'cluster.x-k8s.io/remediate-machine';

interface UnhealthyCheck {
  type: string;
  status: string;
  timeoutMs: number;
}

const fields = (value: Json | undefined): JsonObject => (isObject(value) ? value : {});

/** v1beta1 spec.unhealthyConditions (timeout "300s") or v1beta2 spec.checks.unhealthyNodeConditions (timeoutSeconds). */
function checksOf(mhc: JsonObject): UnhealthyCheck[] {
  const spec = fields(mhc.spec);
  const v1beta2 = fields(spec.checks).unhealthyNodeConditions;
  if (Array.isArray(v1beta2))
    return v1beta2.filter(isObject).map((c) => ({ type: text(c.type), status: text(c.status), timeoutMs: Number(c.timeoutSeconds ?? 0) * 1_000 }));
  const v1beta1 = Array.isArray(spec.unhealthyConditions) ? spec.unhealthyConditions.filter(isObject) : [];
  return v1beta1.map((c) => ({ type: text(c.type), status: text(c.status), timeoutMs: goDurationMs(text(c.timeout)) }));
}

function templateRefOf(mhc: JsonObject): { apiVersion: string; kind: string; name: string } | undefined {
  const spec = fields(mhc.spec);
  const ref = isObject(fields(spec.remediation).templateRef) ? fields(fields(spec.remediation).templateRef) : fields(spec.remediationTemplate);
  return typeof ref.name === 'string' ? { apiVersion: text(ref.apiVersion), kind: text(ref.kind), name: ref.name } : undefined;
}

/** isAllowedRemediation: maxUnhealthy (an int or a percentage of the targets) or unhealthyRange "[a-b]". */
function remediationAllowed(mhc: JsonObject, total: number, unhealthy: number): { allowed: boolean; message: string } {
  const spec = fields(mhc.spec);
  const range = text(fields(fields(spec.remediation).triggerIf).unhealthyInRange) || text(spec.unhealthyRange);
  if (range !== '') {
    const [, low, high] = /^\[(\d+)-(\d+)\]$/.exec(range) ?? [];
    const allowed = unhealthy >= Number(low) && unhealthy <= Number(high);
    return {
      allowed,
      message: `Remediation is not allowed, the number of not started or unhealthy machines does not fall within the range (total: ${total}, unhealthy: ${unhealthy}, unhealthyRange: ${range})`,
    };
  }
  const given = fields(fields(spec.remediation).triggerIf).unhealthyLessThanOrEqualTo ?? spec.maxUnhealthy;
  const raw = typeof given === 'number' ? String(given) : typeof given === 'string' ? given : '100%';
  const max = raw.endsWith('%') ? Math.floor((Number(raw.slice(0, -1)) * total) / 100) : Number(raw);
  return {
    allowed: unhealthy <= max,
    message: `Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: ${total}, unhealthy: ${unhealthy}, maxUnhealthy: ${raw})`,
  };
}

function matches(mhc: JsonObject, machine: JsonObject): boolean {
  const spec = fields(mhc.spec);
  const wanted = { ...(fields(fields(spec.selector).matchLabels) as Record<string, string>), [CLUSTER_NAME_LABEL]: text(spec.clusterName) };
  const labels = labelsOf(machine);
  return Object.entries(wanted).every(([k, v]) => labels[k] === v);
}

/** Why the target needs remediation, or undefined while it is healthy (or not yet past a timeout). */
function unhealthyBecause(sim: SimContext, mhc: JsonObject, machine: JsonObject): { reason: string; message: string } | undefined {
  if (annotationsOf(machine)[REMEDIATE_MACHINE] !== undefined)
    return { reason: 'HasRemediateMachineAnnotation', message: 'Marked for remediation via remediate-machine annotation' };
  const nodeName = nodeRefOf(machine);
  if (nodeName === undefined) return undefined;
  const node = sim.fake.store.find(NODES, '', nodeName);
  if (!node) return { reason: 'NodeNotFound', message: `Node ${nodeName} has been deleted` };
  const messages = checksOf(mhc).flatMap((check) => {
    const condition = nodeCondition(node, check.type);
    if (!condition || condition.status !== check.status) return [];
    const since = Date.parse(text(condition.lastTransitionTime));
    return since + check.timeoutMs < sim.now()
      ? [`Condition ${check.type} on Node is reporting status ${check.status} with reason ${text(condition.reason)} for more than ${check.timeoutMs / 1_000}s`]
      : [];
  });
  return messages.length > 0 ? { reason: 'UnhealthyNode', message: messages.join('; ') } : undefined;
}

export function mhcRound(sim: SimContext, options: { requestResource: { group: string; plural: string } }): void {
  const requests = resourceType(options.requestResource.group, options.requestResource.plural)!;
  for (const mhc of sim.fake.store.list(MHCS, undefined, null)) {
    if (annotationsOf(mhc)[PAUSED_ANNOTATION] !== undefined) continue;
    const namespace = namespaceOf(mhc);
    const targets = sim.fake.store
      .list(MACHINES, namespace, null)
      .filter((m) => matches(mhc, m))
      .filter((m) => annotationsOf(m)[PAUSED_ANNOTATION] === undefined && annotationsOf(m)[SKIP_REMEDIATION] === undefined);
    const judged = targets.map((machine) => ({ machine, unhealthy: unhealthyBecause(sim, mhc, machine) }));
    const unhealthy = judged.filter((t) => t.unhealthy);
    const healthy = judged.filter((t) => !t.unhealthy && !isDeleting(t.machine) && nodeRefOf(t.machine) !== undefined);
    const verdict = remediationAllowed(mhc, targets.length, unhealthy.length);
    let next = withCondition(
      mhc,
      verdict.allowed
        ? { type: 'RemediationAllowed', status: 'True' }
        : { type: 'RemediationAllowed', status: 'False', reason: 'TooManyUnhealthy', severity: 'Warning', message: verdict.message },
      sim.now(),
    );
    next = {
      ...next,
      status: {
        ...fields(next.status),
        expectedMachines: targets.length,
        currentHealthy: healthy.length,
        remediationsAllowed: verdict.allowed ? Math.max(0, targets.length - unhealthy.length) : 0,
        targets: targets.map(nameOf).sort(),
      },
    };
    sim.fake.store.put(MHCS, next);
    if (!verdict.allowed) {
      if (unhealthy.length > 0) sim.said(nameOf(mhc), `short-circuited: ${verdict.message}`);
      for (const t of unhealthy) markHealthCheck(sim, t.machine, t.unhealthy!);
      continue;
    }
    const template = templateRefOf(mhc);
    for (const t of unhealthy) {
      const machine = markHealthCheck(sim, t.machine, t.unhealthy!);
      if (template) {
        // patchUnhealthyTargets: "If external remediation request already exists, return early".
        if (sim.fake.store.find(requests, namespace, nameOf(machine))) break;
        createRequest(sim, requests, template, mhc, machine);
      } else if (!isDeleting(machine)) {
        const owner = conditionOf(machine, 'OwnerRemediated');
        if (!owner || owner.status === 'True') {
          sim.fake.store.put(
            MACHINES,
            withCondition(machine, { type: 'OwnerRemediated', status: 'False', reason: 'WaitingForRemediation', severity: 'Warning' }, sim.now()),
          );
          sim.said(nameOf(machine), `marked for its owner's remediation by ${nameOf(mhc)}`);
        }
      }
    }
    for (const t of healthy) {
      const found = template ? sim.fake.store.find(requests, namespace, nameOf(t.machine)) : undefined;
      if (found && !isDeleting(found)) {
        sim.fake.store.remove(requests, namespace, nameOf(found));
        sim.said(nameOf(t.machine), `healthy again: request deleted by ${nameOf(mhc)}`);
      }
      sim.fake.store.put(MACHINES, withCondition(t.machine, { type: 'HealthCheckSucceeded', status: 'True' }, sim.now()));
    }
  }
}

function markHealthCheck(sim: SimContext, machine: JsonObject, why: { reason: string; message: string }): JsonObject {
  return sim.fake.store.put(
    MACHINES,
    withCondition(machine, { type: 'HealthCheckSucceeded', status: 'False', reason: why.reason, severity: 'Warning', message: why.message }, sim.now()),
  );
}

/** external.GenerateTemplate, named after the Machine, owned by it; then ExternallyRemediated False, WaitingForRemediation. */
function createRequest(
  sim: SimContext,
  requests: NonNullable<ReturnType<typeof resourceType>>,
  ref: { apiVersion: string; kind: string; name: string },
  mhc: JsonObject,
  machine: JsonObject,
): void {
  const namespace = namespaceOf(mhc);
  const found = sim.fake.store.find(resourceType(ref.apiVersion.split('/')[0]!, `${ref.kind.toLowerCase()}s`)!, namespace, ref.name);
  if (!found) {
    sim.said(nameOf(mhc), `template ${ref.kind} ${namespace}/${ref.name} not found`);
    return;
  }
  const template = fields(fields(found.spec).template);
  const metadata = fields(template.metadata);
  const group = ref.apiVersion.split('/')[0]!;
  const request: JsonObject = {
    ...template,
    apiVersion: ref.apiVersion,
    kind: ref.kind.replace(/Template$/, ''),
    metadata: {
      ...metadata,
      name: nameOf(machine),
      namespace: namespaceOf(machine),
      annotations: { ...fields(metadata.annotations), [CLONED_FROM_NAME]: ref.name, [CLONED_FROM_GROUP_KIND]: `${ref.kind}.${group}` },
      labels: { ...fields(metadata.labels), [CLUSTER_NAME_LABEL]: text(fields(machine.spec).clusterName) },
      ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: nameOf(machine), uid: text(metadataOf(machine).uid) }],
    },
  };
  sim.fake.store.put(requests, request);
  const status = fields(machine.status);
  const v1beta2 = fields(status.v1beta2);
  const others = (Array.isArray(v1beta2.conditions) ? v1beta2.conditions : []).filter(isObject).filter((c) => c.type !== 'ExternallyRemediated');
  const waiting = {
    type: 'ExternallyRemediated',
    status: 'False',
    reason: 'WaitingForRemediation',
    lastTransitionTime: new Date(sim.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
  sim.fake.store.put(MACHINES, { ...machine, status: { ...status, v1beta2: { ...v1beta2, conditions: [...others, waiting] } } });
  sim.said(nameOf(machine), `request created by ${nameOf(mhc)}`);
}
