// What holds a replacement, read from the KubeadmControlPlane as KCP writes it: its ScalingUp
// condition (True, "… is blocked because:" and one "* …" line per preflight check; on a v1beta1
// read under status.v1beta2.conditions), or the paused annotation.
import { describe, expect, it } from 'vitest';
import { replacementHoldOf } from '../../../../functions/adapters/kube/cluster-api/replacement-hold.ts';

const kcp = (conditions: object[], where: 'v1beta1' | 'v1beta2' = 'v1beta1', annotations: Record<string, string> = {}) => ({
  metadata: { name: 'wl-control-plane', namespace: 'default', annotations },
  status: where === 'v1beta1' ? { v1beta2: { conditions } } : { conditions },
});
const blocked = {
  type: 'ScalingUp',
  status: 'True',
  reason: 'ScalingUp',
  message:
    'Scaling up from 2 to 3 replicas is blocked because:\n* waiting for control plane components to become healthy\n* waiting for etcd cluster to become healthy',
};

describe('what holds the replacement', () => {
  it("is KCP's blocked ScalingUp in one line, from either version's place", () => {
    const said =
      'KubeadmControlPlane default/wl-control-plane says: Scaling up from 2 to 3 replicas is blocked because: waiting for control plane components to become healthy; waiting for etcd cluster to become healthy';
    expect(replacementHoldOf(kcp([blocked]), 'default/wl-control-plane')).toBe(said);
    expect(replacementHoldOf(kcp([blocked], 'v1beta2'), 'default/wl-control-plane')).toBe(said);
  });

  it('is nothing while it scales up unblocked or is at full size; the paused annotation holds it', () => {
    expect(replacementHoldOf(kcp([{ type: 'ScalingUp', status: 'True', message: 'Scaling up from 2 to 3 replicas' }]), 'x')).toBeUndefined();
    expect(replacementHoldOf(kcp([{ type: 'ScalingUp', status: 'False', reason: 'NotScalingUp' }]), 'x')).toBeUndefined();
    expect(replacementHoldOf(kcp([], 'v1beta1', { 'cluster.x-k8s.io/paused': '' }), 'default/k')).toBe(
      'KubeadmControlPlane default/k is paused (cluster.x-k8s.io/paused): it scales nothing up until that annotation goes',
    );
  });
});
