// Each decision event as a Kubernetes Event on its Machine: reason and note, Normal or Warning, the action.
import { describe, expect, it } from 'vitest';
import { makeEvent } from '../../../events/catalogue.ts';
import { kubeEventOf } from '../../../infra/kubernetes/decision-events.ts';

const envelope = { incidentId: 'inc-1', clusterId: 'default/wl', attempt: 0, at: '2026-01-01T00:00:00Z' };
const target = { memberId: 'a1', name: 'cp-0' };

describe('kubeEventOf', () => {
  it('an approval is Normal, its reason code and sentence as reason and note', () => {
    const event = makeEvent('RemediationApproved', {
      ...envelope,
      target,
      reason: 'LEADER_MOVED',
      message: 'leadership moved off cp-0: removal approved',
      evidence: {},
      leaderMove: 'moved',
    } as never);
    expect(kubeEventOf(event)).toEqual({ reason: 'LEADER_MOVED', note: 'leadership moved off cp-0: removal approved', type: 'Normal', action: 'Approve' });
  });

  it('blocks, failures, deferrals and an overdue replacement are Warnings', () => {
    const said = { reason: 'QUORUM_AT_RISK', message: 'm', evidence: {} };
    expect(kubeEventOf(makeEvent('RemediationBlocked', { ...envelope, target, ...said } as never))?.type).toBe('Warning');
    expect(kubeEventOf(makeEvent('RemediationFailed', { ...envelope, target, ...said, reason: 'ACTUATOR_FAILED' } as never))?.type).toBe('Warning');
    expect(kubeEventOf(makeEvent('RetryRequested', { ...envelope, reason: 'FLEET_STORM', message: 'm', retryAt: envelope.at } as never))).toMatchObject({
      type: 'Warning',
      action: 'Defer',
    });
    expect(
      kubeEventOf(
        makeEvent('ReplacementOverdue', { ...envelope, target, removedAt: envelope.at, windowMs: 1, ...said, reason: 'REPLACEMENT_OVERDUE' } as never),
      )?.type,
    ).toBe('Warning');
    expect(kubeEventOf(makeEvent('RemediationClosed', { ...envelope, target, ...said, reason: 'CLUSTER_PAUSED' } as never))?.type).toBe('Warning');
    expect(kubeEventOf(makeEvent('RemediationClosed', { ...envelope, target, ...said, reason: 'TARGET_RECOVERED' } as never))).toMatchObject({
      type: 'Normal',
      action: 'Close',
    });
  });

  it('a leader move says from whom to whom, over which path', () => {
    const event = makeEvent('LeaderMoved', { ...envelope, from: 'a1', to: 'b2', path: 'port-forward', tookMs: 12 });
    expect(kubeEventOf(event)).toEqual({
      reason: 'LEADER_MOVED',
      note: 'etcd leadership moved from member a1 to b2 over port-forward in 12 ms',
      type: 'Normal',
      action: 'MoveLeader',
    });
  });

  it('a removal says which member went and who leads, the replacement awaited', () => {
    const event = makeEvent('RemediationCompleted', { ...envelope, target, leaderMove: 'moved', newLeader: { id: 'b2', name: 'cp-1' }, timeline: [] });
    expect(kubeEventOf(event)).toEqual({
      reason: 'REPLACEMENT_AWAITED',
      note: 'etcd member cp-0 (a1) was removed and cp-1 (b2) leads; waiting for its replacement to join etcd',
      type: 'Normal',
      action: 'RemoveMember',
    });
  });

  it('says nothing for events that carry no decision', () => {
    expect(kubeEventOf(makeEvent('RetryDue', { ...envelope, reason: 'LEADER_UNREACHABLE' } as never))).toBeUndefined();
  });
});
