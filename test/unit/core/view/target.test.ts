// Which member an incident's selector names: a Machine or Node name through the probe's host
// evidence first, then the aliases and member names of a cluster without kube access.
import { describe, expect, it } from 'vitest';
import { ambiguousTarget } from '../../../../functions/core/plan/plan-checks.ts';
import { reasonRow } from '../../../../functions/core/common/reason-table.ts';
import { describeSelector, healthyTargetWarning, resolveTarget, selectorOf, targetKeyOf } from '../../../../functions/core/view/target.ts';
import type { ClusterView } from '../../../../functions/core/view/view.ts';
import { cluster, id, ids, withHosts } from '../fixtures.ts';

const T0 = 600_000;
const plain = cluster(T0, 3);
/** kube access says member etcd-1 runs on Node etcd-2's name and Machine wl-cp-x: names that cross on purpose. */
const hosted = withHosts(plain, {
  0: { node: 'ip-10-0-0-10', nodeExists: true, machine: { name: 'wl-cp-a', deleting: false } },
  1: { node: 'etcd-2', nodeExists: true, machine: { name: 'etcd-0', deleting: true } },
  2: { node: 'ip-10-0-0-12', nodeExists: false },
});
/** The name of the one member the selector names; undefined for none (or several). */
const nameOf = (v: ClusterView, selector: Parameters<typeof resolveTarget>[1], aliases?: Record<string, string>, known?: string) =>
  nameAndIdOf(v, selector, aliases, known)?.[0];
function nameAndIdOf(
  v: ClusterView,
  selector: Parameters<typeof resolveTarget>[1],
  aliases?: Record<string, string>,
  known?: string,
): [string, string] | undefined {
  const match = resolveTarget(v, selector, aliases, known);
  return match.kind === 'member' ? [match.member.name, match.member.id] : undefined;
}

describe('resolveTarget', () => {
  it('a Machine name resolves by the Machine the probe found, before any alias or member name', () => {
    expect(nameOf(hosted, { machineName: 'wl-cp-a' })).toBe('etcd-0');
    expect(nameOf(hosted, { machineName: 'etcd-0' })).toBe('etcd-1');
    expect(nameOf(hosted, { machineName: 'etcd-0' }, { 'etcd-0': 'etcd-2' })).toBe('etcd-1');
  });

  it('a Node name resolves by the Node the probe found, a gone Node too', () => {
    expect(nameOf(hosted, { nodeName: 'ip-10-0-0-10' })).toBe('etcd-0');
    expect(nameOf(hosted, { nodeName: 'etcd-2' })).toBe('etcd-1');
    expect(nameOf(hosted, { nodeName: 'ip-10-0-0-12' })).toBe('etcd-2');
  });

  it('a Machine name is looked up as a Machine even when a node name is given too', () => {
    expect(nameOf(hosted, { machineName: 'wl-cp-a', nodeName: 'etcd-2' })).toBe('etcd-0');
  });

  it('a name no host matches falls back to the old rules: aliases, then member names', () => {
    expect(nameOf(hosted, { machineName: 'wl-cp-gone' }, { 'wl-cp-gone': 'etcd-2' })).toBe('etcd-2');
    expect(nameOf(hosted, { nodeName: 'etcd-0' })).toBe('etcd-0');
    expect(nameOf(hosted, { machineName: 'nothing' })).toBeUndefined();
  });

  it('without host evidence: the alias, else the member of that name', () => {
    expect(nameOf(plain, { nodeName: 'ip-10-0-0-11' }, { 'ip-10-0-0-11': 'etcd-1' })).toBe('etcd-1');
    expect(nameOf(plain, { machineName: 'etcd-2' })).toBe('etcd-2');
    expect(nameOf(plain, { instanceId: 'i-0a' }, { 'i-0a': 'etcd-0' })).toBe('etcd-0');
    expect(nameOf(plain, { instanceId: 'i-0b' })).toBeUndefined();
    expect(nameOf(plain, { memberName: 'etcd-1' })).toBe('etcd-1');
  });

  it('a member name outranks the node and machine names for the old rules', () => {
    expect(nameOf(plain, { memberName: 'etcd-0', nodeName: 'etcd-1', machineName: 'etcd-2' })).toBe('etcd-0');
    expect(nameOf(plain, { nodeName: 'etcd-1', machineName: 'etcd-2' })).toBe('etcd-1');
  });

  it('a member id is exact, in any case', () => {
    expect(nameOf(hosted, { memberId: id(2).toUpperCase(), nodeName: 'ip-10-0-0-10' })).toBe('etcd-2');
    expect(nameOf(hosted, { memberId: 'deadbeef' })).toBeUndefined();
  });

  it('once resolved an incident sticks to its member id, whatever the selector or hosts say now', () => {
    expect(nameOf(hosted, { machineName: 'wl-cp-a' }, {}, id(2))).toBe('etcd-2');
    expect(nameOf(hosted, { machineName: 'wl-cp-a' }, {}, 'deadbeef')).toBeUndefined();
  });

  it('an empty selector names nobody', () => {
    expect(resolveTarget(hosted, {})).toEqual({ kind: 'none' });
  });
});

/** The view with members renamed, as etcd allows: `names[i]` is member etcd-i's new name. */
const renamed = (v: ClusterView, names: Record<number, string>): ClusterView => ({
  ...v,
  members: v.members.map((m) => {
    const i = ids.indexOf(m.id as (typeof ids)[number]);
    return names[i] === undefined ? m : { ...m, name: names[i] };
  }),
});

/** Member etcd-2 restarted under etcd-0's name: two members named etcd-0. */
const twins = renamed(plain, { 2: 'etcd-0' });
/** kube access puts members etcd-0 and etcd-1 on one Machine and one Node. */
const sharedHost = withHosts(plain, {
  0: { node: 'cp-1', nodeExists: true, machine: { name: 'wl-cp-a', deleting: false } },
  1: { node: 'cp-1', nodeExists: true, machine: { name: 'wl-cp-a', deleting: false } },
  2: { node: 'cp-2', nodeExists: true, machine: { name: 'wl-cp-b', deleting: false } },
});

describe('a selector that matches more than one member', () => {
  it.each([
    ['a member name', twins, { memberName: 'etcd-0' }, {}, [0, 2], 'the name etcd-0'],
    ['a node name taken as a member name', twins, { nodeName: 'etcd-0' }, {}, [0, 2], 'the name etcd-0'],
    ['a machine name taken as a member name', twins, { machineName: 'etcd-0' }, {}, [0, 2], 'the name etcd-0'],
    ['an instance id through an alias', twins, { instanceId: 'i-0a' }, { 'i-0a': 'etcd-0' }, [0, 2], 'the name etcd-0 (the alias of i-0a)'],
    ['a node name through an alias', twins, { nodeName: 'ip-10-0-0-10' }, { 'ip-10-0-0-10': 'etcd-0' }, [0, 2], 'the name etcd-0 (the alias of ip-10-0-0-10)'],
    ['a Machine name through the host the probe found', sharedHost, { machineName: 'wl-cp-a' }, {}, [0, 1], 'Machine wl-cp-a'],
    ['a Node name through the host the probe found', sharedHost, { nodeName: 'cp-1' }, {}, [0, 1], 'Node cp-1'],
  ] as const)('%s: ambiguous, every candidate named', (_, v, selector, aliases, candidates, sharedBy) => {
    const match = resolveTarget(v, selector, aliases);
    expect(match).toMatchObject({ kind: 'ambiguous', sharedBy });
    expect(match.kind === 'ambiguous' ? match.members.map((m) => m.id) : []).toEqual(candidates.map(id));
  });

  it('an id, or the id an incident already resolved, stays exact however many share the name', () => {
    expect(nameAndIdOf(twins, { memberName: 'etcd-0', memberId: id(2) })).toEqual(['etcd-0', id(2)]);
    expect(nameAndIdOf(twins, { memberName: 'etcd-0' }, {}, id(2))).toEqual(['etcd-0', id(2)]);
    expect(nameAndIdOf(sharedHost, { machineName: 'wl-cp-a' }, {}, id(1))).toEqual(['etcd-1', id(1)]);
  });

  it('a host that only one member runs on decides, whatever names the members share', () => {
    const hostedTwins = withHosts(twins, { 2: { node: 'cp-2', nodeExists: true, machine: { name: 'wl-cp-b', deleting: false } } });
    expect(nameAndIdOf(hostedTwins, { machineName: 'wl-cp-b' })).toEqual(['etcd-0', id(2)]);
    expect(nameAndIdOf(hostedTwins, { nodeName: 'cp-2' })).toEqual(['etcd-0', id(2)]);
  });

  it('a name only one member has is not ambiguous', () => {
    expect(nameAndIdOf(twins, { memberName: 'etcd-1' })).toEqual(['etcd-1', id(1)]);
  });
});

describe('AMBIGUOUS_TARGET', () => {
  const frozen = renamed(cluster(T0, 3, { override: { 2: { paths: 'timeout' } } }), { 2: 'etcd-0' });
  const match = resolveTarget(frozen, { memberName: 'etcd-0' });

  it('blocks, naming each candidate by id with how it was reached, and asks for the id', () => {
    if (match.kind !== 'ambiguous') throw new Error(`expected an ambiguous match, got ${match.kind}`);
    expect(ambiguousTarget(match, 'memberName etcd-0', { target: { memberName: 'etcd-0' } })).toEqual({
      kind: 'block',
      reason: 'AMBIGUOUS_TARGET',
      message: `memberName etcd-0 matches 2 etcd members, which share the name etcd-0: etcd-0 (${id(0)}), which answers on direct http://127.0.0.1:4001; and etcd-0 (${id(2)}), which is unreachable on every path (direct http://127.0.0.1:4021 timed out); blocked, nothing is removed on a guess: name the member by its id (--target ${id(0)} or --target ${id(2)}; memberId in an event).`,
      evidence: {
        target: { memberName: 'etcd-0' },
        candidates: [
          { id: id(0), name: 'etcd-0', reached: 'answers on direct http://127.0.0.1:4001' },
          { id: id(2), name: 'etcd-0', reached: 'is unreachable on every path (direct http://127.0.0.1:4021 timed out)' },
        ],
      },
    });
  });

  it('is a block in the reason table', () => {
    expect(reasonRow('AMBIGUOUS_TARGET').outcomes).toEqual(['block']);
  });
});

describe('selectors as text and keys', () => {
  it('describes, drops unset fields, and keys equal targets equally', () => {
    expect(describeSelector({ machineName: 'wl-cp-a', nodeName: 'cp-1' })).toBe('machineName wl-cp-a, nodeName cp-1');
    expect(selectorOf({ nodeName: 'cp-1', machineName: undefined })).toEqual({ nodeName: 'cp-1' });
    expect(targetKeyOf({ nodeName: 'cp-1', machineName: 'm' })).toBe(targetKeyOf({ machineName: 'm', nodeName: 'cp-1' }));
    expect(targetKeyOf({ nodeName: 'cp-1', machineName: 'm' })).toBe('machineName=m,nodeName=cp-1');
  });
});

describe('a healthy target, said before anything is planned or done', () => {
  it('warns for a member healthy on every path, naming each; never for one a path failed or that is unhealthy', () => {
    const healthy = cluster(T0, 3, { leader: 0, override: { 1: { paths: { direct: 'ok', 'port-forward': 'ok' } } } });
    expect(healthyTargetWarning(healthy, id(1))).toBe(
      `etcd-1 (${id(1)}) answers and is healthy on every path (direct http://127.0.0.1:4011, port-forward ${healthy.members[1]!.paths[1]!.endpoint}): remediating it takes a working member out of the cluster; go on only if its machine is what is sick (a kubelet, a disk, containerd), and check the name (probe lists every member)`,
    );
    expect(healthyTargetWarning(cluster(T0, 3, { leader: 0, override: { 1: { paths: { direct: 'ok', 'port-forward': 'refused' } } } }), id(1))).toBeUndefined();
    expect(healthyTargetWarning(cluster(T0, 3, { leader: 0, override: { 1: { paths: 'timeout' } } }), id(1))).toBeUndefined();
    expect(healthyTargetWarning(cluster(T0, 3, { leader: 0, override: { 1: { alarms: ['CORRUPT'] } } }), id(1))).toBeUndefined();
    expect(healthyTargetWarning(healthy, 'f00d')).toBeUndefined();
  });
});
