// The Machine an incident saw its member on, by uid, from its views (newest first). Pure. A
// replacement given the same name (or the Node's name reused) has another uid, so an actuator
// called again after the Machine was replaced leaves the replacement alone.
import type { MachineSummary } from '../common/index.ts';
import type { ClusterView } from '../view/index.ts';

export interface MachineSeen {
  name: string;
  uid: string;
}

/** Whose host is sought: the report's selector (machineName or nodeName name it directly) and the member it resolved to. */
export interface Seeking {
  target: Record<string, string>;
  memberId?: string;
}

function inView(view: ClusterView, { target, memberId }: Seeking): MachineSummary | undefined {
  const machines = view.machines ?? [];
  const member = memberId === undefined ? undefined : view.members.find((m) => m.id === memberId);
  const byName = target.machineName ?? member?.host?.machine?.name;
  if (byName !== undefined) return machines.find((m) => m.name === byName);
  const node = target.nodeName ?? member?.host?.node ?? member?.name;
  return node ? machines.find((m) => m.nodeName === node) : undefined;
}

/**
 * Only views that still list the member count (a view after its removal could list a replacement
 * by then); without a member (a Machine whose member was already gone), the newest view. undefined
 * when no such view listed the Machine with a uid (no management access, or too many Machines).
 */
export function machineSeen(views: readonly ClusterView[], seeking: Seeking): MachineSeen | undefined {
  const { memberId } = seeking;
  const before = memberId === undefined ? views.slice(-1) : views.filter((v) => v.members.some((m) => m.id === memberId));
  for (const view of [...before].reverse()) {
    const machine = inView(view, seeking);
    if (machine?.uid) return { name: machine.name, uid: machine.uid };
  }
  return undefined;
}
