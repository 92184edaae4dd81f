// Which member an incident's selector names. With kube access the probe says which Node and
// Machine each member runs on; otherwise kubeadm names etcd members after their nodes, so a node,
// machine or instance name resolves through the cluster's aliases, then as a member name.
import { describeMember, type ClusterView, type MemberView } from './view.ts';

/** The ways a producer may name the sick member: the event schemas, the CLI and the resolver read this one list. */
export const selectorKeys = ['memberName', 'memberId', 'nodeName', 'machineName', 'instanceId'] as const;
export type SelectorKey = (typeof selectorKeys)[number];

export type TargetSelector = Partial<Record<SelectorKey, string>>;

/**
 * What a selector names in a view: one member, none, or several it cannot tell apart. etcd lets
 * members share a name, and kube access may put two members on one Machine or Node: such a
 * selector is ambiguous, never settled by list order (that once removed the healthy twin).
 */
export type TargetMatch = { kind: 'member'; member: MemberView } | { kind: 'none' } | { kind: 'ambiguous'; members: MemberView[]; sharedBy: string };

export function resolveTarget(view: ClusterView, selector: TargetSelector, aliases: Record<string, string> = {}, knownMemberId?: string): TargetMatch {
  // Once resolved, an incident sticks to its member id: names can be reused by a replacement.
  if (knownMemberId) return matching(view, (m) => m.id === knownMemberId, `the id ${knownMemberId}`);
  if (selector.memberId) {
    const wanted = selector.memberId.toLowerCase();
    return matching(view, (m) => m.id === wanted, `the id ${wanted}`);
  }
  // With kube access the probe says where each member runs: a Machine or Node name resolves exactly.
  const { machineName, nodeName } = selector;
  const onHost = machineName
    ? matching(view, (m) => m.host?.machine?.name === machineName, `Machine ${machineName}`)
    : nodeName
      ? matching(view, (m) => m.host?.node === nodeName, `Node ${nodeName}`)
      : NONE;
  if (onHost.kind !== 'none') return onHost;
  const name = selector.memberName ?? nodeName ?? machineName ?? selector.instanceId;
  if (name === undefined) return NONE;
  const memberName = aliases[name] ?? name;
  const via = memberName === name ? '' : ` (the alias of ${name})`;
  return matching(view, (m) => m.name === memberName, `the name ${memberName}${via}`);
}

const NONE: TargetMatch = { kind: 'none' };

function matching(view: ClusterView, named: (m: MemberView) => boolean, sharedBy: string): TargetMatch {
  const members = view.members.filter(named);
  if (members.length === 0) return NONE;
  if (members.length === 1) return { kind: 'member', member: members[0]! };
  return { kind: 'ambiguous', members, sharedBy };
}

/** The member a match names, when it names exactly one. */
export const matchedMember = (match: TargetMatch): MemberView | undefined => (match.kind === 'member' ? match.member : undefined);

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

/**
 * Said before a person's plan or remediate of a member that answers and is healthy on every path
 * it was probed over: removing it takes a working member out. It may be meant (the machine is
 * what is sick: a kubelet, a disk, containerd), so it is a warning, never a refusal. Undefined
 * when any path failed or the member is not healthy.
 */
export function healthyTargetWarning(view: Pick<ClusterView, 'members'>, targetId: string): string | undefined {
  const m = view.members.find((member) => member.id === targetId);
  if (!m || !m.healthy || m.paths.length === 0 || m.paths.some((p) => p.reachability !== 'ok')) return undefined;
  const paths = m.paths.map((p) => `${p.path} ${p.endpoint}`).join(', ');
  return `${describeMember(m)} answers and is healthy on every path (${paths}): remediating it takes a working member out of the cluster; go on only if its machine is what is sick (a kubelet, a disk, containerd), and check the name (probe lists every member)`;
}
