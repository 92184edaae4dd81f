// Which member an incident's selector names: a Machine or Node name through the probe's host
// evidence first, then the aliases and member names of a cluster without kube access.
import { describe, expect, it } from 'vitest';
import { describeSelector, resolveTarget, selectorOf, targetKeyOf } from '../../../functions/core/target.ts';
import { cluster, id, withHosts } from './fixtures.ts';

const T0 = 600_000;
const plain = cluster(T0, 3);
/** kube access says member etcd-1 runs on Node etcd-2's name and Machine wl-cp-x: names that cross on purpose. */
const hosted = withHosts(plain, {
  0: { node: 'ip-10-0-0-10', nodeExists: true, machine: { name: 'wl-cp-a', deleting: false } },
  1: { node: 'etcd-2', nodeExists: true, machine: { name: 'etcd-0', deleting: true } },
  2: { node: 'ip-10-0-0-12', nodeExists: false },
});
const nameOf = (v: typeof plain, selector: Parameters<typeof resolveTarget>[1], aliases?: Record<string, string>, known?: string) =>
  resolveTarget(v, selector, aliases, known)?.name;

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
    expect(resolveTarget(hosted, {})).toBeUndefined();
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
