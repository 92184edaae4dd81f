// What an EtcdRemediationRequest's status says, as a function of its incident and the incident's
// journal alone (the watcher recomputes it each round and writes what differs): a close by another
// remediator is no recovery, an ending the request outlives says where it goes on, and the leader
// move an approval decided or a step made stays said through a later retry and the ending.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../functions/core/common/decision.ts';
import { decisionStep, journalSteps, type JournalEntry } from '../../../functions/core/incident/index.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { goesOnAfter, statusOfIncident } from '../../../infra/kubernetes/request-status.ts';

type CloseReason = 'TARGET_RECOVERED' | 'REQUEST_WITHDRAWN' | 'DUPLICATE_INCIDENT' | 'CLUSTER_PAUSED' | 'REMEDIATION_NOT_ALLOWED';

const incidentWith = (state: Incident['state'], decision: Decision | undefined): Incident => ({
  incidentId: 'i-1',
  clusterId: 'ns/wl',
  targetKey: 'machineName=wl-cp-2',
  target: { machineName: 'wl-cp-2' },
  reason: 'Node NotReady',
  state,
  openedAt: 1_000,
  updatedAt: 2_000,
  attempt: 1,
  waits: 0,
  immediateReprobes: 0,
  views: [],
  ...(decision ? { lastDecision: decision, ...(state === 'open' ? {} : { result: decision }) } : {}),
  outbox: [],
  stepsDone: [],
  version: 3,
});

const incidentClosedBy = (reason: CloseReason, evidence: Record<string, unknown> = {}): Incident =>
  incidentWith('closed', { kind: 'close', reason, message: `closed: ${reason}`, evidence });

const approvedAs = (reason: 'LEADER_MOVED' | 'TARGET_IS_FOLLOWER', leaderMove: 'moved' | 'not-needed'): Decision => ({
  kind: 'approve',
  reason,
  leaderMove,
  message: 'approved',
  evidence: {},
});
const line = (step: string, detail: Record<string, unknown> = {}): JournalEntry => ({ at: 1_500, step, detail }) as JournalEntry;

describe('the status of a request whose incident closed', () => {
  it.each([
    ['TARGET_RECOVERED', 'Recovered'],
    ['REQUEST_WITHDRAWN', 'Cancelled'],
    // Another incident holds the member: the request goes on in that one. Recovered would say the
    // member healed, Completed that its Machine was replaced; neither happened yet.
    ['DUPLICATE_INCIDENT', 'Running'],
    ['CLUSTER_PAUSED', 'Pending'],
    ['REMEDIATION_NOT_ALLOWED', 'Pending'],
  ] as const)("%s: phase %s, with the close's words and when it ended", (reason, phase) => {
    expect(statusOfIncident(incidentClosedBy(reason))).toMatchObject({
      phase,
      reasonCode: reason,
      message: `closed: ${reason}`,
      completedAt: new Date(2_000).toISOString(),
    });
  });
});

describe('how a request goes on after an incident that did not end it', () => {
  it('a duplicate: in the incident its evidence names', () => {
    expect(goesOnAfter(incidentClosedBy('DUPLICATE_INCIDENT', { incidentId: 'holder' }))).toEqual({ kind: 'in-holder', holderId: 'holder' });
    expect(goesOnAfter(incidentClosedBy('DUPLICATE_INCIDENT'))).toEqual({ kind: 'in-holder' });
  });

  it.each(['CLUSTER_PAUSED', 'REMEDIATION_NOT_ALLOWED'] as const)('%s: reported once Cluster API allows it', (reason) => {
    expect(goesOnAfter(incidentClosedBy(reason))).toEqual({ kind: 'when-allowed' });
  });

  it('any other ending ends the request, and an open incident goes on as it is', () => {
    expect(goesOnAfter(incidentClosedBy('TARGET_RECOVERED'))).toBeUndefined();
    expect(goesOnAfter(incidentClosedBy('REQUEST_WITHDRAWN'))).toBeUndefined();
    expect(goesOnAfter(incidentWith('completed', approvedAs('TARGET_IS_FOLLOWER', 'not-needed')))).toBeUndefined();
    expect(goesOnAfter({ ...incidentClosedBy('DUPLICATE_INCIDENT', { incidentId: 'holder' }), state: 'open' })).toBeUndefined();
  });
});

describe('the status of a request whose incident ended otherwise', () => {
  it.each([
    ['blocked', 'Blocked', 'NO_QUORUM'],
    ['failed', 'Failed', 'STEP_FAILED'],
  ] as const)("%s: phase %s, with the decision's reason and words", (state, phase, reason) => {
    const decision = { kind: state === 'blocked' ? 'block' : 'fail', reason, message: `said: ${reason}`, evidence: {} } as Decision;
    expect(statusOfIncident(incidentWith(state, decision))).toMatchObject({ phase, reasonCode: reason, message: `said: ${reason}` });
  });

  it("awaiting its replacement, then completed: the ending's own words, the approval's reason code kept", () => {
    const awaiting = incidentWith('awaiting-replacement', approvedAs('TARGET_IS_FOLLOWER', 'not-needed'));
    expect(statusOfIncident(awaiting)).toMatchObject({
      phase: 'AwaitingReplacement',
      reasonCode: 'TARGET_IS_FOLLOWER',
      message: 'the member was removed and a new leader stands; waiting for the replacement Machine to join etcd',
    });
    expect(goesOnAfter(awaiting)).toBeUndefined();
    expect(statusOfIncident({ ...awaiting, state: 'completed' })).toMatchObject({
      phase: 'Completed',
      reasonCode: 'TARGET_IS_FOLLOWER',
      message: 'the member was removed and its replacement joined: the cluster is whole again',
    });
  });
});

describe('the leader move a request shows', () => {
  it('none before any approval: a probing incident has decided nothing about leadership', () => {
    expect(statusOfIncident(incidentWith('open', undefined))).not.toHaveProperty('leaderMove');
    const retry: Decision = { kind: 'retry', reason: 'CLUSTER_UNREACHABLE', message: 'again', evidence: {} } as Decision;
    expect(statusOfIncident(incidentWith('open', retry))).toMatchObject({ phase: 'Waiting' });
    expect(statusOfIncident(incidentWith('open', retry))).not.toHaveProperty('leaderMove');
  });

  it("the approval's, while it is the last decision", () => {
    expect(statusOfIncident(incidentWith('open', approvedAs('TARGET_IS_FOLLOWER', 'not-needed')))).toMatchObject({
      phase: 'Running',
      leaderMove: 'not-needed',
    });
  });

  it('moved, once the journal records a move, though a later re-approval found a follower', () => {
    const journal = [line(journalSteps.leaderMoved)];
    expect(statusOfIncident(incidentWith('open', approvedAs('TARGET_IS_FOLLOWER', 'not-needed')), journal)).toMatchObject({ leaderMove: 'moved' });
    expect(statusOfIncident(incidentWith('completed', approvedAs('TARGET_IS_FOLLOWER', 'not-needed')), journal)).toMatchObject({
      phase: 'Completed',
      leaderMove: 'moved',
    });
  });

  it("a retry after the approval (an election after the removal): the journaled approval's", () => {
    const retry = { kind: 'retry', reason: 'ELECTION_IN_PROGRESS', message: 'an election', evidence: {} } as Decision;
    const journal = [line(decisionStep('move-leader', 'approve'), { reason: 'TARGET_IS_FOLLOWER', message: 'approved', evidence: {} })];
    expect(statusOfIncident(incidentWith('open', retry), journal)).toMatchObject({ phase: 'Waiting', leaderMove: 'not-needed' });
  });
});
