// The conditions of an EtcdRemediationRequest, from its status: one per type, reasons valid as
// metav1.Condition wants them, and a transition time that moves only when a status does.
import { describe, expect, it } from 'vitest';
import { conditionReason, conditionsOf, CONDITION_TYPES, type Condition } from '../../../../functions/core/kubernetes/request-conditions.ts';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:05:00Z';
/** metav1.Condition's reason pattern, as the CRD schema holds it. */
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

const byType = (conditions: readonly Condition[]) => Object.fromEntries(conditions.map((c) => [c.type, c]));

describe('request conditions', () => {
  it('maps a reason code to CamelCase, valid for metav1.Condition', () => {
    expect(conditionReason('LEADER_MOVED')).toBe('LeaderMoved');
    expect(conditionReason('LEADER_UNREACHABLE_PAST_GRACE')).toBe('LeaderUnreachablePastGrace');
    expect(conditionReason('TLS_FAILED')).toBe('TlsFailed');
    expect(conditionReason('AwaitingReplacement')).toBe('AwaitingReplacement');
    for (const weird of ['', '9_LIVES', '__', 'a-b c']) expect(conditionReason(weird)).toMatch(REASON);
  });

  it('says one condition of each type, every field the CRD requires set', () => {
    const conditions = conditionsOf({ phase: 'Running', reasonCode: 'LEADER_MOVE_REQUIRED', message: 'the leader must move first' }, [], {
      now: T0,
      generation: 3,
    });
    expect(conditions.map((c) => c.type)).toEqual([...CONDITION_TYPES]);
    for (const c of conditions) {
      expect(c.reason).toMatch(REASON);
      expect(['True', 'False', 'Unknown']).toContain(c.status);
      expect(c).toMatchObject({ lastTransitionTime: T0, observedGeneration: 3, message: 'the leader must move first' });
    }
  });

  it.each([
    ['Running', 'LEADER_MOVE_REQUIRED', { Ready: 'False', Remediated: 'False', Blocked: 'False', Paused: 'False' }],
    ['AwaitingReplacement', 'LEADER_MOVED', { Ready: 'False', Remediated: 'True', Blocked: 'False', Paused: 'False' }],
    ['Completed', 'LEADER_MOVED', { Ready: 'True', Remediated: 'True', Blocked: 'False', Paused: 'False' }],
    ['Recovered', 'TARGET_RECOVERED', { Ready: 'True', Remediated: 'False', Blocked: 'False', Paused: 'False' }],
    ['Blocked', 'QUORUM_AT_RISK', { Ready: 'False', Remediated: 'False', Blocked: 'True', Paused: 'False' }],
    ['Failed', 'ACTUATOR_FAILED', { Ready: 'False', Remediated: 'Unknown', Blocked: 'True', Paused: 'False' }],
    ['Pending', 'CLUSTER_PAUSED', { Ready: 'False', Remediated: 'False', Blocked: 'False', Paused: 'True' }],
    ['Waiting', 'FLEET_STORM', { Ready: 'False', Remediated: 'False', Blocked: 'False', Paused: 'True' }],
    ['Cancelled', 'REQUEST_WITHDRAWN', { Ready: 'False', Remediated: 'False', Blocked: 'False', Paused: 'False' }],
  ] as const)('%s (%s): %o', (phase, reasonCode, expected) => {
    const statuses = Object.fromEntries(conditionsOf({ phase, reasonCode, message: 'm' }, [], { now: T0 }).map((c) => [c.type, c.status]));
    expect(statuses).toEqual(expected);
  });

  it('gives the reason code as the reason, or the phase when there is none', () => {
    expect(byType(conditionsOf({ phase: 'AwaitingReplacement', reasonCode: 'LEADER_MOVED', message: 'm' }, [], { now: T0 })).Remediated!.reason).toBe(
      'LeaderMoved',
    );
    const pending = byType(conditionsOf({ phase: 'Pending' }, [], { now: T0 }));
    expect(pending.Ready).toMatchObject({ reason: 'Pending', message: 'the request is Pending' });
  });

  it('a completion whose reason closed the incident removed nothing', () => {
    expect(byType(conditionsOf({ phase: 'Completed', reasonCode: 'DUPLICATE_INCIDENT', message: 'm' }, [], { now: T0 })).Remediated!.status).toBe('False');
  });

  it('keeps lastTransitionTime while a status stays, and moves it when it changes; reason and message follow always', () => {
    const running = conditionsOf({ phase: 'Running', reasonCode: 'LEADER_MOVE_REQUIRED', message: 'move first' }, [], { now: T0, generation: 1 });
    const later = byType(conditionsOf({ phase: 'AwaitingReplacement', reasonCode: 'LEADER_MOVED', message: 'removed' }, running, { now: T1, generation: 2 }));
    expect(later.Ready).toMatchObject({ status: 'False', reason: 'LeaderMoved', message: 'removed', lastTransitionTime: T0, observedGeneration: 2 });
    expect(later.Remediated).toMatchObject({ status: 'True', lastTransitionTime: T1 });
    expect(later.Blocked!.lastTransitionTime).toBe(T0);
  });

  it("keeps conditions of other types as they were (another writer's)", () => {
    const theirs: Condition = { type: 'example.com/Audited', status: 'True', reason: 'Seen', message: 'x', lastTransitionTime: T0 };
    const conditions = conditionsOf({ phase: 'Running' }, [theirs], { now: T1 });
    expect(conditions.at(-1)).toEqual(theirs);
  });
});
