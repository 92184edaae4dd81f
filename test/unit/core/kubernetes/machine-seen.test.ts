import { describe, expect, it } from 'vitest';
import { machineSeen } from '../../../../functions/core/kubernetes/machine-seen.ts';
import type { ClusterView, MemberView } from '../../../../functions/core/view/view.ts';

const member = (id: string, name: string, machine?: string): MemberView =>
  ({
    id,
    name,
    clientUrls: [],
    peerUrls: [],
    isLearner: false,
    reachable: true,
    paths: [],
    ...(machine ? { host: { nodeExists: true, node: name, machine: { name: machine, deleting: false } } } : {}),
  }) as unknown as MemberView;

const view = (members: MemberView[], machines: ClusterView['machines']): ClusterView => ({ members, machines }) as unknown as ClusterView;

const cp2 = member('b', 'cp-2', 'wl-cp-2');

describe('machineSeen', () => {
  it('takes the uid from the newest view that still lists the member', () => {
    const views = [
      view([cp2], [{ name: 'wl-cp-2', nodeName: 'cp-2', deleting: false, uid: 'old' }]),
      // After the removal: the member is gone, and a Machine with its name is a replacement by now.
      view([], [{ name: 'wl-cp-2', nodeName: 'cp-2', deleting: false, uid: 'new' }]),
    ];
    expect(machineSeen(views, { target: { nodeName: 'cp-2' }, memberId: 'b' })).toEqual({ name: 'wl-cp-2', uid: 'old' });
  });

  it('finds the Machine by the selector, by the member host, or by the node', () => {
    const machines = [
      { name: 'wl-cp-1', nodeName: 'cp-1', deleting: false, uid: 'u1' },
      { name: 'wl-cp-2', nodeName: 'cp-2', deleting: false, uid: 'u2' },
    ];
    const views = [view([member('a', 'cp-1'), cp2], machines)];
    expect(machineSeen(views, { target: { machineName: 'wl-cp-1' }, memberId: 'a' })).toEqual({ name: 'wl-cp-1', uid: 'u1' });
    expect(machineSeen(views, { target: { memberName: 'cp-2' }, memberId: 'b' })).toEqual({ name: 'wl-cp-2', uid: 'u2' });
    expect(machineSeen(views, { target: { memberName: 'cp-1' }, memberId: 'a' })).toEqual({ name: 'wl-cp-1', uid: 'u1' });
  });

  it('without a member (its Machine has none), reads the newest view only', () => {
    const views = [view([], [{ name: 'wl-cp-3', deleting: false, uid: 'first' }]), view([], [{ name: 'wl-cp-3', deleting: false, uid: 'second' }])];
    expect(machineSeen(views, { target: { machineName: 'wl-cp-3' } })).toEqual({ name: 'wl-cp-3', uid: 'second' });
  });

  it('is undefined when no view listed the Machine with a uid', () => {
    expect(machineSeen([view([cp2], [{ name: 'wl-cp-2', deleting: false }])], { target: {}, memberId: 'b' })).toBeUndefined();
    expect(machineSeen([view([cp2], undefined)], { target: {}, memberId: 'b' })).toBeUndefined();
    expect(machineSeen([], { target: { machineName: 'x' } })).toBeUndefined();
  });
});
