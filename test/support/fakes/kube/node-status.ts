// A Node's status as its kubelet posts it (pkg/kubelet/nodestatus setters: MemoryPressure,
// DiskPressure, PIDPressure, then Ready) and as the node lifecycle controller ages it when the
// kubelet stops posting (pkg/controller/nodelifecycle tryUpdateNodeHealth: every kubelet condition
// Unknown, "Kubelet stopped posting node status.", the last heartbeat kept, the transition now;
// then the node.kubernetes.io/unreachable taints, NoSchedule and NoExecute, each with timeAdded as
// SwapNodeControllerTaint stamps it). Pure: the caller says when.
import { type Json, type JsonObject, isObject, text } from './patch.ts';

/** kube-controller-manager --node-monitor-grace-period (NodeLifecycleController defaults). */
export const DEFAULT_NODE_MONITOR_GRACE_MS = 40_000;

/**
 * kubelet.go maxWaitForContainerRuntime: the runtime state reports "container runtime is down"
 * once no runtime sync succeeded for 30 s, and the next status post carries it.
 */
export const DEFAULT_RUNTIME_DOWN_NOTICED_MS = 30_000;

export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';
export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

/** What a healthy kubelet reports, in the order it sets them. */
const HEALTHY: readonly { type: string; status: string; reason: string; message: string }[] = [
  { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
];

const KUBELET_TYPES = new Set(HEALTHY.map((condition) => condition.type));

function conditionsOf(node: JsonObject): JsonObject[] {
  const status = isObject(node.status) ? node.status : {};
  return (Array.isArray(status.conditions) ? status.conditions : []).filter(isObject);
}

function withStatus(node: JsonObject, conditions: JsonObject[]): JsonObject {
  return { ...node, status: { ...(isObject(node.status) ? node.status : {}), conditions } };
}

function withTaints(node: JsonObject, taints: Json[]): JsonObject {
  const { taints: _old, ...spec } = isObject(node.spec) ? node.spec : {};
  return { ...node, spec: taints.length > 0 ? { ...spec, taints } : spec };
}

function taintsOf(node: JsonObject): JsonObject[] {
  return (isObject(node.spec) && Array.isArray(node.spec.taints) ? node.spec.taints : []).filter(isObject);
}

/**
 * The kubelet posts its conditions: the heartbeat is now, a transition only where the status
 * changed. The controller then lifts its unreachable taints (doNoScheduleTaintingPass and
 * doNoExecuteTaintingPass remove them once Ready is True).
 */
export function postedByKubelet(node: JsonObject, now: string): JsonObject {
  const before = new Map(conditionsOf(node).map((condition) => [condition.type, condition]));
  const conditions = HEALTHY.map((healthy) => {
    const previous = before.get(healthy.type);
    const transition = previous?.status === healthy.status && typeof previous.lastTransitionTime === 'string' ? previous.lastTransitionTime : now;
    return { ...healthy, lastHeartbeatTime: now, lastTransitionTime: transition };
  });
  const others = conditionsOf(node).filter((condition) => !KUBELET_TYPES.has(text(condition.type)));
  return withTaints(
    withStatus(node, [...conditions, ...others]),
    taintsOf(node).filter((taint) => taint.key !== UNREACHABLE_TAINT && taint.key !== NOT_READY_TAINT),
  );
}

/** The controller's view of a kubelet silent past the grace period. */
export function stoppedPosting(node: JsonObject, now: string): JsonObject {
  const conditions = conditionsOf(node).map((condition) =>
    KUBELET_TYPES.has(text(condition.type)) && condition.status !== 'Unknown'
      ? { ...condition, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: now }
      : condition,
  );
  const others = taintsOf(node).filter((taint) => taint.key !== UNREACHABLE_TAINT);
  const unreachable = ['NoSchedule', 'NoExecute'].map((effect) => ({ key: UNREACHABLE_TAINT, effect, timeAdded: now }));
  return withTaints(withStatus(node, conditions), [...others, ...unreachable]);
}

/**
 * The kubelet still posts, but its runtime is gone (nodestatus ReadyCondition with the runtime
 * state's error): Ready False, reason KubeletNotReady, "container runtime is down". The pressure
 * conditions are posted as before. The lifecycle controller taints it not-ready (NoSchedule by
 * condition, NoExecute by doNoExecuteTaintingPass), never unreachable: the Node still posts.
 */
export function runtimeDown(node: JsonObject, now: string): JsonObject {
  const posted = postedByKubelet(node, now);
  const before = new Map(conditionsOf(node).map((condition) => [condition.type, condition]));
  const conditions = conditionsOf(posted).map((condition) =>
    condition.type === 'Ready'
      ? {
          ...condition,
          status: 'False',
          reason: 'KubeletNotReady',
          message: 'container runtime is down',
          lastTransitionTime: before.get('Ready')?.status === 'False' ? (before.get('Ready')!.lastTransitionTime ?? now) : now,
        }
      : condition,
  );
  const others = taintsOf(posted).filter((taint) => taint.key !== NOT_READY_TAINT);
  const notReady = ['NoSchedule', 'NoExecute'].map((effect) => ({ key: NOT_READY_TAINT, effect, timeAdded: now }));
  return withTaints(withStatus(posted, conditions), [...others, ...notReady]);
}
