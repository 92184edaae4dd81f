// Whether the target's machine is known gone, from what the probe's look at the workload cluster
// (and Cluster API) saw. Pure. A member whose Node is gone cannot come back as it was: KCP would
// wait on its kubelet forever, and waiting out a grace window buys nothing.
import type { MemberId } from '../common/index.ts';
import type { ClusterView } from './view.ts';

/**
 * A phrase ("its Node cp-2 no longer exists"), or undefined when nothing says the machine is
 * gone. An unmatched member counts as gone only where every other member's Node was found: that
 * proves matching works in this cluster, so a naming scheme we cannot read never looks like loss.
 */
export function hostGoneFinding(view: ClusterView | undefined, targetId: MemberId): string | undefined {
  const target = view?.members.find((m) => m.id === targetId);
  const host = target?.host;
  if (!view || !host) return undefined;
  if (host.machine?.deleting) return `its Machine ${host.machine.name} is being deleted`;
  if (host.nodeExists) return undefined;
  if (host.node !== undefined) return `its Node ${host.node} no longer exists${host.pod ? ` (its etcd pod ${host.pod} still names it)` : ''}`;
  const others = view.members.filter((m) => m.id !== targetId && !m.isLearner);
  const othersFound = others.length > 0 && others.every((m) => m.host?.nodeExists === true);
  return othersFound ? 'no Node or etcd pod runs it any more, while every other member’s Node was found' : undefined;
}
