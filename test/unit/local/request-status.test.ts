// What an EtcdRemediationRequest's status says when its incident ends, from the event and from
// the incident read again after a restart: the two must agree, and a close by another remediator
// is no recovery.
import { describe, expect, it } from 'vitest';
import { makeEvent, type EventEnvelope } from '../../../events/catalogue.ts';
import type { Decision } from '../../../functions/core/decision.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { statusOfEvent, statusOfIncident } from '../../../infra/local/request-status.ts';
import { loadSample } from '../events/samples.ts';

const closedBy = (reason: 'TARGET_RECOVERED' | 'REQUEST_WITHDRAWN' | 'DUPLICATE_INCIDENT'): EventEnvelope =>
  makeEvent('RemediationClosed', { ...loadSample('RemediationClosed'), reason, message: `closed: ${reason}` });

const incidentClosedBy = (reason: 'TARGET_RECOVERED' | 'REQUEST_WITHDRAWN' | 'DUPLICATE_INCIDENT'): Incident => {
  const decision: Decision = { kind: 'close', reason, message: `closed: ${reason}`, evidence: {} };
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
    // Another incident or remediator removes the member and replaces its Machine: the request is
    // done by that one. Recovered would say the member healed, and have it reported again later.
    ['DUPLICATE_INCIDENT', 'Completed'],
  ] as const)('%s: phase %s, from the event and from the incident alike', (reason, phase) => {
    expect(statusOfEvent(closedBy(reason))).toMatchObject({ phase, reasonCode: reason, message: `closed: ${reason}` });
    expect(statusOfIncident(incidentClosedBy(reason))).toMatchObject({ phase, reasonCode: reason, message: `closed: ${reason}`, completedAt: new Date(2_000).toISOString() });
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

  it('RemediationCompleted: Completed, saying the Machine is being replaced; the approval keeps its reason code', () => {
    const status = statusOfEvent(makeEvent('RemediationCompleted', loadSample('RemediationCompleted')));
    expect(status).toMatchObject({ phase: 'Completed', message: 'the member was removed and a new leader stands; the Machine is being replaced' });
    expect(status).not.toHaveProperty('reasonCode');
  });
});
