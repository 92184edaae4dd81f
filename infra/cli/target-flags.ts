// The member plan and remediate are about: --target (an etcd member name or id), or, with kube
// access, --machine (a Cluster API Machine) or --node (a Kubernetes Node), which resolve through
// where the probe found each member running.
import { describeSelector, resolveTarget, type TargetMatch, type ClusterView } from '../../functions/core/view/index.ts';
import { UsageError } from './args.ts';
import { kubeGiven, type AccessFlagValues } from './cluster-flags.ts';

export const targetOptions = {
  target: { type: 'string' },
  machine: { type: 'string' },
  node: { type: 'string' },
} as const;

export const targetHelp = `  --target NAME|ID         the member to remediate, by etcd member name or hex id
  --machine NAME           or by its Cluster API Machine (needs --kubeconfig and --cluster)
  --node NAME              or by its Kubernetes Node (needs --kubeconfig)
                           give exactly one of --target, --machine and --node`;

export type TargetFlagName = keyof typeof targetOptions;

/** The member as its flag named it. */
export interface TargetFlag {
  flag: TargetFlagName;
  value: string;
}

/** e.g. `--machine wl-cp-1`. */
export const describeTargetFlag = (target: TargetFlag): string => `--${target.flag} ${target.value}`;

/** Exactly one of the three, each with the access it needs; usage errors name the flag. */
export function targetFromFlags(values: AccessFlagValues & { [K in TargetFlagName]?: string | undefined }): TargetFlag {
  const given = (Object.keys(targetOptions) as TargetFlagName[]).flatMap((flag) => (values[flag] === undefined ? [] : [{ flag, value: values[flag] }]));
  if (given.length === 0) throw new UsageError('--target is required (e.g. --target etcd-1), or --machine NAME or --node NAME with --kubeconfig');
  if (given.length > 1) throw new UsageError(`${given.map((t) => `--${t.flag}`).join(' and ')}: give exactly one of --target, --machine and --node`);
  const target = given[0]!;
  if (target.value.trim() === '') throw new UsageError(`--${target.flag}: must not be empty`);
  const kube = kubeGiven(values);
  if (target.flag === 'machine' && !kube.capi) {
    throw new UsageError('--machine needs --kubeconfig and --cluster NAME: the Machines are read in the Cluster API management cluster');
  }
  if (target.flag === 'node' && !kube.kubeconfig) throw new UsageError('--node needs --kubeconfig: the Nodes are read in the workload cluster');
  return target;
}

/** The MemberUnhealthy selector of a --machine or --node target; --target needs the member list. */
export function hostSelector(target: TargetFlag): { machineName: string } | { nodeName: string } | undefined {
  if (target.flag === 'machine') return { machineName: target.value };
  if (target.flag === 'node') return { nodeName: target.value };
  return undefined;
}

/** --target is a member name, else a member id; a name several members share is ambiguous, as in the pipeline. */
export function findTarget(view: ClusterView, target: TargetFlag, aliases?: Record<string, string>): TargetMatch {
  const selector = hostSelector(target);
  if (selector) return resolveTarget(view, selector, aliases);
  const byName = resolveTarget(view, { memberName: target.value });
  return byName.kind === 'none' ? resolveTarget(view, { memberId: target.value }) : byName;
}

/** How a not-found message names what was looked for, as the pipeline names a selector. */
export function describeWanted(target: TargetFlag): string {
  const selector = hostSelector(target);
  return selector ? describeSelector(selector) : `name or id ${target.value}`;
}
