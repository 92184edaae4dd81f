// The repeatable NAME=VALUE flags of `register`: --member NAME=INSTANCE_ID, --node NAME=NODE_NAME
// and --alias OTHER=NAME, folded into the registration's members and aliases.
import type { ClusterRegistration } from '../../../functions/adapters/aws/cluster-registration.ts';
import { UsageError } from './args.ts';

type Member = NonNullable<ClusterRegistration['members']>[number];

/** `a=b` pairs of one flag, in order; a usage error naming the flag for anything else. */
export function pairsFromFlag(flag: string, shape: string, values: readonly string[]): [string, string][] {
  return values.map((value) => {
    const eq = value.indexOf('=');
    const [left, right] = [value.slice(0, eq).trim(), value.slice(eq + 1).trim()];
    if (eq <= 0 || !left || !right) throw new UsageError(`--${flag}: ${JSON.stringify(value)} is not ${shape}`);
    return [left, right];
  });
}

/** One entry per member named, with its instance and node; the same member given twice for one is refused. */
export function membersFromFlags(memberFlags: readonly string[], nodeFlags: readonly string[]): Member[] {
  const byName = new Map<string, Member>();
  const add = (flag: string, field: 'instanceId' | 'nodeName', [memberName, value]: [string, string]) => {
    const member = byName.get(memberName) ?? { memberName };
    if (member[field] !== undefined) throw new UsageError(`--${flag}: member ${memberName} is given twice (${member[field]} and ${value})`);
    member[field] = value;
    byName.set(memberName, member);
  };
  for (const pair of pairsFromFlag('member', 'NAME=INSTANCE_ID', memberFlags)) add('member', 'instanceId', pair);
  for (const pair of pairsFromFlag('node', 'NAME=NODE_NAME', nodeFlags)) add('node', 'nodeName', pair);
  return [...byName.values()];
}
