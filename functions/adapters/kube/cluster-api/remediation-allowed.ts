// Whether a request's MachineHealthCheck lets remediation happen now, read from the MHC as Cluster
// API writes it (kubernetes-sigs/cluster-api core/reconcilers/machinehealthcheck): when more
// Machines are unhealthy than spec.maxUnhealthy (v1beta1) / spec.remediation.triggerIf (v1beta2)
// allow, it short-circuits: RemediationAllowed False, reason TooManyUnhealthy, and it neither
// creates requests nor deletes those of Machines that became healthy. The condition is in
// status.conditions (v1beta1's Condition with a severity; v1beta2's metav1.Condition) and mirrored
// in status.v1beta2.conditions (v1beta1) / status.deprecated.v1beta1.conditions (v1beta2). The MHCs
// of a Machine are those of its Cluster whose selector matches its labels (machineToMachineHealthCheck,
// HasMatchingLabels: an empty selector matches nothing); the one that made a request is the one
// whose template it was cloned from. Pure.
import type { ReasonCode } from '../../../core/common/index.ts';
import { describePause, objectName, pauseOf, type Pause } from './cluster-paused.ts';
import { fieldsOf as fields } from './machines.ts';

export interface KubeObjectShape {
  metadata?: { name?: unknown; namespace?: unknown; uid?: unknown; labels?: unknown; annotations?: unknown };
  spec?: unknown;
  status?: unknown;
}

type Fields = Record<string, unknown>;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const labelsOf = (object: KubeObjectShape): Fields => fields(object.metadata?.labels);

export const REMEDIATION_ALLOWED = 'RemediationAllowed';

/** metav1.LabelSelector against a label set; an empty or malformed selector matches nothing, as HasMatchingLabels. */
export function selectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  const matchLabels = fields(fields(selector).matchLabels);
  const expressions = list(fields(selector).matchExpressions).map(fields);
  if (Object.keys(matchLabels).length === 0 && expressions.length === 0) return false;
  const labelsHold = Object.entries(matchLabels).every(([key, value]) => labels[key] === value);
  return labelsHold && expressions.every((e) => expressionHolds(e, labels));
}

function expressionHolds(expression: Fields, labels: Record<string, string>): boolean {
  const key = text(expression.key);
  if (key === undefined) return false;
  const values = list(expression.values).filter((v): v is string => typeof v === 'string');
  const has = Object.hasOwn(labels, key);
  switch (expression.operator) {
    case 'In':
      return has && values.includes(labels[key]!);
    case 'NotIn':
      return !has || !values.includes(labels[key]!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false;
  }
}

/** The template an MHC clones requests from: v1beta2 spec.remediation.templateRef, v1beta1 spec.remediationTemplate. */
const templateOf = (mhc: KubeObjectShape): string | undefined =>
  text(fields(fields(fields(mhc.spec).remediation).templateRef).name) ?? text(fields(fields(mhc.spec).remediationTemplate).name);

/** ClusterClass's generated objects carry this label (topology.cluster.x-k8s.io/owned). */
const TOPOLOGY_OWNED = 'topology.cluster.x-k8s.io/owned';

/** Which remediator an MHC hands its Machines to: a template's kind and name, or none (KCP's own remediation). */
const remediatorOf = (mhc: KubeObjectShape): { kind?: string; name: string } | undefined => {
  const ref = fields(fields(fields(mhc.spec).remediation).templateRef);
  const v1beta1 = fields(fields(mhc.spec).remediationTemplate);
  const found = text(ref.name) !== undefined ? ref : v1beta1;
  const name = text(found.name);
  return name === undefined ? undefined : { name, ...(text(found.kind) ? { kind: text(found.kind)! } : {}) };
};

/** Our template's kind: an MHC with it hands its Machines to us, whatever the template's name. */
export const OUR_TEMPLATE_KIND = 'EtcdRemediationRequestTemplate';

/**
 * The MHCs that watch this Machine for its Cluster but hand it to someone else: no template (KCP
 * remediates it itself, in parallel with us and outside our lock) or another kind of template.
 * Pure.
 */
export function competingHealthChecksOf(mhcs: readonly KubeObjectShape[], machine: Omit<WatchedMachine, 'templateName'>): KubeObjectShape[] {
  return healthChecksOf(mhcs, machine).filter((mhc) => remediatorOf(mhc)?.kind !== OUR_TEMPLATE_KIND);
}

/** Who an MHC hands its Machines to, said of `them` (it, them). */
function remediatorWords(mhc: KubeObjectShape, them: 'it' | 'them'): string {
  const remediator = remediatorOf(mhc);
  return remediator
    ? `hands ${them} to ${remediator.kind ?? 'a template'} ${remediator.name}`
    : `has no remediation template, so KubeadmControlPlane remediates ${them} itself`;
}

/** What a person does about a competing MHC: where ClusterClass generated it, that is where it is changed. */
function competitorFix(mhc: KubeObjectShape): string {
  return labelsOf(mhc)[TOPOLOGY_OWNED] !== undefined
    ? "It was generated from the Cluster's ClusterClass (spec.topology): give it our template there (the ClusterClass's controlPlane.machineHealthCheck.remediationTemplate, v1beta2 controlPlane.healthCheck.remediation.templateRef, or the Cluster's spec.topology.controlPlane override), or turn it off"
    : `Give it our template (${OUR_TEMPLATE_KIND}) or delete it`;
}

function describeCompetitor(mhc: KubeObjectShape, machine: string): string {
  return (
    `MachineHealthCheck ${objectName(mhc)} also selects Machine ${machine} and ${remediatorWords(mhc, 'it')}, in parallel with etcd-remediator and outside its lock: the request is not acted on while two remediators would act on one Machine. ` +
    `${competitorFix(mhc)}; the request is then reported`
  );
}

/** A MachineHealthCheck that hands some of the Machines ours watch to another remediator. */
export interface Competition {
  /** The MHC that competes: no template (KubeadmControlPlane remediates) or another kind of template. */
  rival: KubeObjectShape;
  /** Ours (with our template) that select the same Machines, by name. */
  ours: string[];
  /** The Machines both select, by name, sorted. */
  machines: string[];
  /** What it means and what a person does, naming the MHC, its remediator and the Machines. */
  message: string;
}

/**
 * Every MHC that selects a Machine one of ours (our template's kind) selects, in the same
 * Cluster, and hands it to someone else: what `watch` finds at start and on each scan, before any
 * request. A request for those Machines is not acted on (COMPETING_REMEDIATION, holdOf). Pure.
 */
export function competitionsOf(mhcs: readonly KubeObjectShape[], machines: readonly KubeObjectShape[]): Competition[] {
  const byRival = new Map<KubeObjectShape, { ours: Set<string>; machines: Set<string> }>();
  for (const machine of machines) {
    const clusterName = text(labelsOf(machine)['cluster.x-k8s.io/cluster-name']);
    if (clusterName === undefined || text(machine.metadata?.namespace) === undefined) continue;
    const sameNamespace = mhcs.filter((mhc) => mhc.metadata?.namespace === machine.metadata?.namespace);
    const watching = healthChecksOf(sameNamespace, { clusterName, labels: stringLabels(machine) });
    const ours = watching.filter((mhc) => remediatorOf(mhc)?.kind === OUR_TEMPLATE_KIND);
    if (ours.length === 0) continue;
    for (const rival of watching.filter((mhc) => !ours.includes(mhc))) {
      const found = byRival.get(rival) ?? { ours: new Set<string>(), machines: new Set<string>() };
      for (const mhc of ours) found.ours.add(text(mhc.metadata?.name) ?? '');
      found.machines.add(text(machine.metadata?.name) ?? '');
      byRival.set(rival, found);
    }
  }
  return [...byRival].map(([rival, found]) => {
    const machineNames = [...found.machines].sort();
    const ours = [...found.ours].sort();
    return { rival, ours, machines: machineNames, message: describeCompetition(rival, ours, machineNames) };
  });
}

const stringLabels = (object: KubeObjectShape): Record<string, string> =>
  Object.fromEntries(Object.entries(labelsOf(object)).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));

function describeCompetition(rival: KubeObjectShape, ours: readonly string[], machines: readonly string[]): string {
  const [them, plural] = machines.length === 1 ? (['it', 'Machine'] as const) : (['them', 'Machines'] as const);
  return (
    `MachineHealthCheck ${objectName(rival)} selects ${plural} ${machines.join(', ')}, which ${ours.join(' and ')} hands to etcd-remediator, and ${remediatorWords(rival, them)}, in parallel and outside etcd-remediator's lock: ` +
    `a request for ${them} is not acted on (COMPETING_REMEDIATION) while two remediators would act on one Machine. ${competitorFix(rival)}`
  );
}

export interface WatchedMachine {
  clusterName: string;
  labels: Record<string, string>;
  /** The template the request was cloned from, when it says. */
  templateName?: string;
}

/**
 * The MHCs that watch this Machine for its Cluster (the controller adds the cluster-name label to
 * the selector) and, when the request names its template, clone that template.
 */
export function healthChecksOf(mhcs: readonly KubeObjectShape[], machine: WatchedMachine): KubeObjectShape[] {
  const labels = { ...machine.labels, 'cluster.x-k8s.io/cluster-name': machine.clusterName };
  return mhcs.filter(
    (mhc) =>
      fields(mhc.spec).clusterName === machine.clusterName &&
      selectorMatches(fields(mhc.spec).selector, labels) &&
      (machine.templateName === undefined || templateOf(mhc) === machine.templateName),
  );
}

export interface NotAllowed {
  reason: string;
  message: string;
}

/** RemediationAllowed False in any of the MHC's condition lists, with MHC's own reason and words; undefined when allowed. */
export function remediationNotAllowed(mhc: KubeObjectShape): NotAllowed | undefined {
  const status = fields(mhc.status);
  const lists = [status.conditions, fields(status.v1beta2).conditions, fields(fields(status.deprecated).v1beta1).conditions];
  const denied = lists
    .flatMap(list)
    .map(fields)
    .find((c) => c.type === REMEDIATION_ALLOWED && c.status === 'False');
  return denied ? { reason: text(denied.reason) ?? 'unknown', message: text(denied.message) ?? '' } : undefined;
}

export interface Hold {
  reason: Extract<ReasonCode, 'CLUSTER_PAUSED' | 'REMEDIATION_NOT_ALLOWED' | 'COMPETING_REMEDIATION'>;
  /** Who stopped what, and what a person does about it. */
  message: string;
  pause?: Pause;
}

/**
 * What holds a request back, if anything: its Cluster paused, its Machine or MachineHealthCheck
 * paused, or that MHC short-circuited. undefined when Cluster API lets remediation happen.
 */
export function holdOf(input: {
  cluster?: KubeObjectShape;
  machine?: KubeObjectShape;
  healthChecks: readonly KubeObjectShape[];
  competing?: readonly KubeObjectShape[];
}): Hold | undefined {
  const pause =
    pauseOf('Cluster', input.cluster) ?? pauseOf('Machine', input.machine) ?? input.healthChecks.map((mhc) => pauseOf('MachineHealthCheck', mhc)).find(Boolean);
  if (pause) return { reason: 'CLUSTER_PAUSED', message: describePause(pause), pause };
  const rival = input.competing?.[0];
  if (rival) return { reason: 'COMPETING_REMEDIATION', message: describeCompetitor(rival, objectName(input.machine ?? {})) };
  for (const mhc of input.healthChecks) {
    const denied = remediationNotAllowed(mhc);
    if (!denied) continue;
    const said = denied.message ? `${denied.reason}: ${denied.message}` : denied.reason;
    return {
      reason: 'REMEDIATION_NOT_ALLOWED',
      message:
        `MachineHealthCheck ${objectName(mhc)} short-circuits remediation (${REMEDIATION_ALLOWED} False, ${said}): Cluster API remediates none of its Machines while so many are unhealthy, and neither does etcd-remediator. ` +
        'It allows remediation again once fewer of its Machines are unhealthy (find out first why so many are), or once its maxUnhealthy (v1beta2: remediation.triggerIf) allows more',
    };
  }
  return undefined;
}
