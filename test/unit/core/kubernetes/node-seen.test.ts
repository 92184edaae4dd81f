// The Node an incident's Events go on without Cluster API, pure: the report's node, else the Node
// the newest view that still lists the member saw it on.
import { describe, expect, it } from 'vitest';
import { nodeReference, nodeSeen } from '../../../../functions/core/kubernetes/node-seen.ts';
import type { ClusterView, MemberView } from '../../../../functions/core/view/view.ts';

const member = (id: string, name: string, node?: string): MemberView =>
  ({
    id,
    name,
    clientUrls: [],
    peerUrls: [],
    isLearner: false,
    reachable: true,
    paths: [],
    ...(node ? { host: { nodeExists: true, node } } : {}),
  }) as unknown as MemberView;

const view = (members: MemberView[]): ClusterView => ({ members }) as unknown as ClusterView;

describe('nodeSeen', () => {
  it("takes the report's node when it names one", () => {
    expect(nodeSeen([view([member('a', 'cp-1', 'node-1')])], { target: { nodeName: 'node-9' }, memberId: 'a' })).toBe('node-9');
  });

  it('takes the node of the newest view that still lists the member, not one after its removal', () => {
    const views = [view([member('a', 'cp-1', 'node-old')]), view([member('a', 'cp-1', 'node-1')]), view([member('b', 'cp-2', 'node-2')])];
    expect(nodeSeen(views, { target: { memberName: 'cp-1' }, memberId: 'a' })).toBe('node-1');
  });

  it('says nothing when no view placed the member on a Node, or the target is not resolved', () => {
    expect(nodeSeen([view([member('a', 'cp-1')])], { target: { memberName: 'cp-1' }, memberId: 'a' })).toBeUndefined();
    expect(nodeSeen([view([member('a', 'cp-1', 'node-1')])], { target: { memberName: 'cp-1' } })).toBeUndefined();
    expect(nodeSeen([], { target: { memberId: 'a' }, memberId: 'a' })).toBeUndefined();
  });
});

describe('nodeReference', () => {
  it('is a cluster-scoped v1 Node: no namespace, its uid when known, else its name as kubelet gives it', () => {
    expect(nodeReference('node-1', 'u-1')).toEqual({ kind: 'Node', apiVersion: 'v1', namespace: '', name: 'node-1', uid: 'u-1' });
    expect(nodeReference('node-1')).toEqual({ kind: 'Node', apiVersion: 'v1', namespace: '', name: 'node-1', uid: 'node-1' });
  });
});
