// Whether Cluster API has paused acting on a Machine, read as Cluster API reads it (kubernetes-sigs/
// cluster-api util/annotations IsPaused(cluster, o): the Cluster's spec.paused, or the object's
// cluster.x-k8s.io/paused annotation). MachineHealthCheck's Reconcile returns early when
// IsPaused(cluster, mhc), its patchUnhealthyTargets skips a Machine when IsPaused(cluster, machine),
// and its watch predicates drop a Cluster that carries the annotation. `clusterctl move` pauses
// each Cluster by spec.paused (cmd/clusterctl/client/cluster/mover.go setClusterPause) while it
// moves it. spec.paused is a bool in v1beta1 and a *bool in v1beta2: both read the same. Pure.

export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';

export type PausableKind = 'Cluster' | 'MachineHealthCheck' | 'Machine';

export interface Pause {
  kind: PausableKind;
  /** namespace/name */
  name: string;
  by: 'spec.paused' | 'annotation';
}

interface Pausable {
  metadata?: { name?: unknown; namespace?: unknown; annotations?: unknown };
  spec?: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const textOf = (value: unknown): string => (typeof value === 'string' ? value : '');

/** namespace/name, as messages name an object. */
export const objectName = (object: Pausable): string => `${textOf(object.metadata?.namespace)}/${textOf(object.metadata?.name)}`;

/** How `object` of `kind` is paused, if it is: spec.paused counts on a Cluster only, as IsPaused reads it. */
export function pauseOf(kind: PausableKind, object: Pausable | undefined): Pause | undefined {
  if (!object) return undefined;
  const spec = isRecord(object.spec) ? object.spec : {};
  if (kind === 'Cluster' && spec.paused === true) return { kind, name: objectName(object), by: 'spec.paused' };
  const annotations = isRecord(object.metadata?.annotations) ? object.metadata.annotations : {};
  // Present is paused, whatever its value (hasAnnotation).
  if (Object.hasOwn(annotations, PAUSED_ANNOTATION)) return { kind, name: objectName(object), by: 'annotation' };
  return undefined;
}

const RESOURCE = { Cluster: 'cluster', MachineHealthCheck: 'machinehealthcheck', Machine: 'machine' } as const satisfies Record<PausableKind, string>;

/** Who paused what, and what a person does to let remediation go on. */
export function describePause(pause: Pause): string {
  const [namespace, name] = pause.name.split('/') as [string, string];
  const what = `${pause.kind} ${pause.name}`;
  if (pause.by === 'spec.paused') {
    return (
      `${what} is paused (spec.paused: true; clusterctl move pauses a Cluster so while it moves it): Cluster API's MachineHealthCheck does not act on its Machines, and neither does etcd-remediator. ` +
      `Unpause it (clusterctl move does when it is done; by hand: kubectl patch cluster ${name} -n ${namespace} --type merge -p '{"spec":{"paused":null}}')`
    );
  }
  return (
    `${what} carries the ${PAUSED_ANNOTATION} annotation: Cluster API's MachineHealthCheck does not act on ${pause.kind === 'Machine' ? 'it' : 'its Machines'}, and neither does etcd-remediator. ` +
    `Remove it to go on (kubectl annotate ${RESOURCE[pause.kind]} ${name} -n ${namespace} ${PAUSED_ANNOTATION}-)`
  );
}
