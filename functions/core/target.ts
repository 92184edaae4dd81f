// Which member an incident's selector names. With kube access the probe says which Node and
// Machine each member runs on; otherwise kubeadm names etcd members after their nodes, so a node,
// machine or instance name resolves through the cluster's aliases, then as a member name.
import type { ClusterView, MemberView } from './view.ts';

export type TargetSelector = Partial<Record<'memberName' | 'memberId' | 'nodeName' | 'machineName' | 'instanceId', string>>;

export function resolveTarget(
  view: ClusterView,
  selector: TargetSelector,
  aliases: Record<string, string> = {},
  knownMemberId?: string,
): MemberView | undefined {
  // Once resolved, an incident sticks to its member id: names can be reused by a replacement.
  if (knownMemberId) return view.members.find((m) => m.id === knownMemberId);
  if (selector.memberId) return view.members.find((m) => m.id === selector.memberId!.toLowerCase());
  // With kube access the probe says where each member runs: a Machine or Node name resolves exactly.
  const { machineName, nodeName } = selector;
  const onHost = machineName
    ? view.members.find((m) => m.host?.machine?.name === machineName)
    : nodeName
      ? view.members.find((m) => m.host?.node === nodeName)
      : undefined;
  if (onHost) return onHost;
  const name = selector.memberName ?? nodeName ?? machineName ?? selector.instanceId;
  if (name === undefined) return undefined;
  const memberName = aliases[name] ?? name;
  return view.members.find((m) => m.name === memberName);
}

/** The selector as a sentence names it, e.g. `memberName etcd-0`. */
export const describeSelector = (selector: TargetSelector): string =>
  Object.entries(selector)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/** The selector an event gives, its unset fields dropped, as the store keeps it. */
export const selectorOf = (target: Partial<Record<string, string | undefined>>): Record<string, string> =>
  Object.fromEntries(Object.entries(target).filter((e): e is [string, string] => e[1] !== undefined));

/** Canonical target key: keys sorted, "k=v" joined by ",", so equal targets give equal keys. */
export const targetKeyOf = (target: Record<string, string>): string =>
  Object.keys(target)
    .sort()
    .map((k) => `${k}=${target[k]}`)
    .join(',');
