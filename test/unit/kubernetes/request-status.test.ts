// What an EtcdRemediationRequest's status says when its incident ends, from the event and from
// the incident read again after a restart: the two must agree, a close by another remediator is
// no recovery, and an ending the request outlives says where it goes on.
import { describe, expect, it } from 'vitest';
import { makeEvent, type EventEnvelope } from '../../../events/catalogue.ts';
import type { Decision } from '../../../functions/core/common/decision.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { goesOnAfter, goesOnAfterEvent, statusOfEvent, statusOfIncident } from '../../../infra/kubernetes/request-status.ts';
import { loadSample } from '../events/samples.ts';

type CloseReason = 'TARGET_RECOVERED' | 'REQUEST_WITHDRAWN' | 'DUPLICATE_INCIDENT' | 'CLUSTER_PAUSED' | 'REMEDIATION_NOT_ALLOWED';

const closedBy = (reason: CloseReason, evidence: Record<string, unknown> = {}): EventEnvelope =>
  makeEvent('RemediationClosed', { ...loadSample('RemediationClosed'), reason, message: `closed: ${reason}`, evidence });

const incidentClosedBy = (reason: CloseReason, evidence: Record<string, unknown> = {}): Incident => {
  const decision: Decision = { kind: 'close', reason, message: `closed: ${reason}`, evidence };
  return {
    incidentId: 'i-1',
    clusterId: 'ns/wl',
    targetKey: 'machineName=wl-cp-2',
    target: { machineName: 'wl-cp-2' },
    reason: 'Node NotReady',
    state: 'closed',
    openedAt: 1_000,
    updatedAt: 2_000,
    attempt: 1,
    waits: 0,
    immediateReprobes: 0,
    views: [],
    lastDecision: decision,
    result: decision,
    outbox: [],
    stepsDone: [],
    version: 3,
  };
};

describe('the status of a request whose incident closed', () => {
  it.each([
    ['TARGET_RECOVERED', 'Recovered'],
    ['REQUEST_WITHDRAWN', 'Cancelled'],
    // Another incident holds the member: the request goes on in that one. Recovered would say the
    // member healed, Completed that its Machine was replaced; neither happened yet.
    ['DUPLICATE_INCIDENT', 'Running'],
    ['CLUSTER_PAUSED', 'Pending'],
    ['REMEDIATION_NOT_ALLOWED', 'Pending'],
  ] as const)('%s: phase %s, from the event and from the incident alike', (reason, phase) => {
    expect(statusOfEvent(closedBy(reason))).toMatchObject({ phase, reasonCode: reason, message: `closed: ${reason}` });
    expect(statusOfIncident(incidentClosedBy(reason))).toMatchObject({
      phase,
      reasonCode: reason,
      message: `closed: ${reason}`,
      completedAt: new Date(2_000).toISOString(),
    });
  });
});

describe('how a request goes on after an incident that did not end it', () => {
  it('a duplicate: in the incident its evidence names, from the event and from the incident alike', () => {
    expect(goesOnAfterEvent(closedBy('DUPLICATE_INCIDENT', { incidentId: 'holder' }))).toEqual({ kind: 'in-holder', holderId: 'holder' });
    expect(goesOnAfter(incidentClosedBy('DUPLICATE_INCIDENT', { incidentId: 'holder' }))).toEqual({ kind: 'in-holder', holderId: 'holder' });
    expect(goesOnAfter(incidentClosedBy('DUPLICATE_INCIDENT'))).toEqual({ kind: 'in-holder' });
  });

  it.each(['CLUSTER_PAUSED', 'REMEDIATION_NOT_ALLOWED'] as const)('%s: reported once Cluster API allows it', (reason) => {
    expect(goesOnAfterEvent(closedBy(reason))).toEqual({ kind: 'when-allowed' });
    expect(goesOnAfter(incidentClosedBy(reason))).toEqual({ kind: 'when-allowed' });
  });

  it('any other ending ends the request, and an open incident goes on as it is', () => {
    expect(goesOnAfter(incidentClosedBy('TARGET_RECOVERED'))).toBeUndefined();
    expect(goesOnAfterEvent(closedBy('REQUEST_WITHDRAWN'))).toBeUndefined();
    expect(goesOnAfterEvent(makeEvent('RemediationCompleted', loadSample('RemediationCompleted')))).toBeUndefined();
    expect(goesOnAfter({ ...incidentClosedBy('DUPLICATE_INCIDENT', { incidentId: 'holder' }), state: 'open' })).toBeUndefined();
  });
});

describe('the status of a request whose incident ended otherwise', () => {
  it.each([
    ['RemediationBlocked', 'Blocked'],
    ['RemediationFailed', 'Failed'],
  ] as const)('%s: phase %s, with the reason and message the event carries', (detailType, phase) => {
    const event = makeEvent(detailType, loadSample(detailType)) as EventEnvelope;
    const { reason, message } = loadSample(detailType);
    expect(statusOfEvent(event)).toMatchObject({ phase, reasonCode: reason, message });
  });

  it('RemediationCompleted: AwaitingReplacement, saying the replacement has not joined yet; the approval keeps its reason code', () => {
    const status = statusOfEvent(makeEvent('RemediationCompleted', loadSample('RemediationCompleted')));
    expect(status).toMatchObject({
      phase: 'AwaitingReplacement',
      message: 'the member was removed and a new leader stands; waiting for the replacement Machine to join etcd',
    });
    expect(status).not.toHaveProperty('reasonCode');
  });

  it('RemediationReplaced: Completed, from the event and from the incident alike', () => {
    expect(statusOfEvent(makeEvent('RemediationReplaced', loadSample('RemediationReplaced')))).toMatchObject({
      phase: 'Completed',
      message: 'the member was removed and its replacement joined: the cluster is whole again',
    });
    const approved: Decision = { kind: 'approve', reason: 'TARGET_IS_FOLLOWER', leaderMove: 'not-needed', message: 'approved', evidence: {} };
    const awaiting = { ...incidentClosedBy('TARGET_RECOVERED'), state: 'awaiting-replacement' as const, lastDecision: approved };
    expect(statusOfIncident(awaiting)).toMatchObject({ phase: 'AwaitingReplacement', reasonCode: 'TARGET_IS_FOLLOWER' });
    expect(goesOnAfter(awaiting)).toBeUndefined();
    expect(statusOfIncident({ ...awaiting, state: 'completed' })).toMatchObject({ phase: 'Completed', reasonCode: 'TARGET_IS_FOLLOWER' });
  });
});
