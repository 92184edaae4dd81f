// The Node a decision's Event goes on in Kubernetes without Cluster API, pure: the report's node
// (--node, a nodeName), else the Node the newest view that still lists the member saw it on (a view
// after its removal no longer places it). And the reference to it: Nodes are cluster-scoped.
import type { Seeking } from './machine-seen.ts';
import type { InvolvedObject } from './object-events.ts';
import type { ClusterView } from '../view/index.ts';

export function nodeSeen(views: readonly ClusterView[], { target, memberId }: Seeking): string | undefined {
  if (target.nodeName) return target.nodeName;
  if (memberId === undefined) return undefined;
  for (const view of [...views].reverse()) {
    const node = view.members.find((m) => m.id === memberId)?.host?.node;
    if (node) return node;
  }
  return undefined;
}

/**
 * A Node as an Event's involvedObject. Without its uid the name stands in, as kubelet's recorder
 * puts it ("this makes the event appear in kubectl describe node", which searches by either).
 */
export const nodeReference = (name: string, uid?: string): InvolvedObject => ({ kind: 'Node', apiVersion: 'v1', namespace: '', name, uid: uid ?? name });
