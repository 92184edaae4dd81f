// The typed journal: lines this build writes read back as written; lines an earlier build wrote as
// text read as fields where a later step needs their facts, and as what they said otherwise; every
// line is said in words from its fields.
import { describe, expect, it } from 'vitest';
import { readJournalLine } from '../../../functions/core/journal-earlier.ts';
import { journalWords, timelineOf } from '../../../functions/core/journal-words.ts';
import {
  isDecisionLine,
  isEarlier,
  isMoveMadeLine,
  journalSteps,
  markerOf,
  moveMadeStep,
  type JournalEntry,
  type NamedStep,
} from '../../../functions/core/journal.ts';
import { lastApprovalIn, leaderMoveOf } from '../../../functions/core/leader-move.ts';
import { writtenByEarlierBuild } from '../../support/earlier-paths.ts';
import { moveMadeLine, sampleDetails, sampleLine } from '../../support/journal-lines.ts';
import { view } from './fixtures.ts';

/** A line as a store hands it to the reader: its detail decoded from JSON. */
const stored = (step: string, detail: unknown, isStepMarker = false) => readJournalLine({ at: 1_000, step, detail, isStepMarker });

describe('a line this build wrote', () => {
  it.each(Object.keys(sampleDetails) as NamedStep[])('%s reads back with its fields', (step) => {
    const line = sampleLine(step);
    expect(stored(line.step, JSON.parse(JSON.stringify(line.detail)))).toEqual({ at: 1_000, ...line, isStepMarker: false });
  });

  it('a decision line and the move marker read back with their fields', () => {
    expect(stored('remediate:block', { reason: 'QUORUM_AT_RISK', message: 'no.' })).toEqual({
      at: 1_000,
      step: 'remediate:block',
      detail: { reason: 'QUORUM_AT_RISK', message: 'no.' },
      isStepMarker: false,
    });
    const made = moveMadeLine(2);
    expect(stored(made.step, made.detail, true)).toEqual({ at: 1_000, ...made, isStepMarker: true });
  });
});

describe('a line an earlier build wrote with fields, naming the relay `exec`', () => {
  it('leader-moved reads with exec-relay', () => {
    const line = { ...sampleDetails[journalSteps.leaderMoved], path: 'exec' };
    expect(stored(journalSteps.leaderMoved, line)).toEqual({
      at: 1_000,
      step: journalSteps.leaderMoved,
      detail: { ...line, path: 'exec-relay' },
      isStepMarker: false,
    });
  });

  it('the move marker: its move and its views read with exec-relay', () => {
    const today = view(900, [
      { i: 0, paths: { direct: 'refused', 'exec-relay': 'ok' } },
      { i: 1, leader: 0 },
      { i: 2, leader: 0 },
    ]);
    const made = {
      ...moveMadeLine(2).detail,
      views: [today],
      moved: { ...sampleDetails[journalSteps.leaderMoved], path: 'exec-relay' as const, attempt: 2, at: 900 },
    };
    const entry = stored(moveMadeStep(2), JSON.parse(writtenByEarlierBuild(made)), true);
    expect(isMoveMadeLine(entry) && entry.detail).toEqual(made);
  });
});

describe('a line an earlier build wrote as text', () => {
  it('a decision ("REASON: message") reads as its reason and message', () => {
    const entry = stored('move-leader:approve', 'LEADER_UNREACHABLE_PAST_GRACE: etcd-0 stayed unreachable: past the grace window.');
    expect(isDecisionLine(entry) && entry.detail).toEqual({
      reason: 'LEADER_UNREACHABLE_PAST_GRACE',
      message: 'etcd-0 stayed unreachable: past the grace window.',
    });
  });

  it('a decision whose text names no reason code is kept as said', () => {
    const entry = stored('remediate:retry', 'something: else');
    expect(entry).toEqual({ at: 1_000, step: 'remediate:retry', said: 'something: else', isStepMarker: false });
  });

  it('the election (JSON text) reads as the leader it names', () => {
    const entry = stored(journalSteps.leaderElected, JSON.stringify({ id: '91bc3c398fb3c146', name: 'etcd-1', term: 4, afterRemovalMs: 930 }), true);
    expect(markerOf([entry], journalSteps.leaderElected)?.detail).toEqual({ id: '91bc3c398fb3c146', name: 'etcd-1', term: 4, afterRemovalMs: 930 });
  });

  it('the move marker (JSON text of the decision and the outbox that says the move) reads as the decision and the move', () => {
    const decision = { kind: 'approve', leaderMove: 'moved', reason: 'LEADER_MOVED', message: 'Leadership moved from etcd-0 to etcd-1.', evidence: {} };
    const leaderMoved = [
      { kind: 'journal', entry: { at: 900, step: 'leader-moved', detail: 'Leadership moved from etcd-0 to etcd-1.' } },
      {
        kind: 'publish',
        event: {
          source: 'etcd-remediator',
          detailType: 'LeaderMoved',
          detail: { incidentId: 'i', clusterId: 'c1', attempt: 2, at: '2025-06-01T12:00:00.900Z', from: 'a1', to: 'b2', path: 'exec', tookMs: 54 },
        },
      },
    ];
    const entry = stored(moveMadeStep(2), JSON.stringify({ decision, leaderMoved }), true);
    expect(isMoveMadeLine(entry) && entry.detail).toEqual({
      decision,
      // The relay's old name, `exec`, reads as exec-relay.
      moved: {
        from: 'a1',
        to: 'b2',
        path: 'exec-relay',
        tookMs: 54,
        message: 'Leadership moved from etcd-0 to etcd-1.',
        attempt: 2,
        at: Date.parse('2025-06-01T12:00:00.900Z'),
      },
    });
  });

  it('any other line is kept as it was said, and shown so', () => {
    const entry = stored(journalSteps.memberRemoved, 'removed through etcd-1 over direct http://127.0.0.1:4001', true);
    expect(isEarlier(entry)).toBe(true);
    expect(journalWords(entry)).toBe('removed through etcd-1 over direct http://127.0.0.1:4001');
    expect(journalWords(stored('opened', undefined))).toBe('');
    expect(journalWords(stored('opened', { n: 1 }))).toBe('{"n":1}');
  });

  it('an earlier journal still gives the approval and the leader move of a resumed incident', () => {
    const journal: JournalEntry[] = [
      stored('move-leader:retry', 'LEADER_UNREACHABLE: etcd-0 is unreachable; we wait.'),
      stored('move-leader:approve', 'LEADER_UNREACHABLE_PAST_GRACE: etcd-0 stayed unreachable past the grace window.'),
      stored(journalSteps.memberRemoved, 'removed through etcd-1 over direct http://127.0.0.1:4001', true),
      stored('remediate:retry', 'ELECTION_IN_PROGRESS: etcd-0 was removed, but no leader yet.'),
    ];
    expect(lastApprovalIn(journal)).toEqual({ reason: 'LEADER_UNREACHABLE_PAST_GRACE', leaderMove: 'skipped' });
    expect(leaderMoveOf(journal, { kind: 'retry', at: 0, reprobeNow: false, reason: 'ELECTION_IN_PROGRESS', message: 'm', evidence: {} })).toBe('skipped');
  });
});

describe('the journal in words', () => {
  it.each(Object.keys(sampleDetails) as NamedStep[])('%s says something, from its fields', (step) => {
    const words = journalWords({ at: 0, ...sampleLine(step) });
    expect(words).not.toBe('');
    expect(words).not.toMatch(/\[object Object\]|^\{/);
  });

  it('says the lines as the timeline always showed them', () => {
    expect(journalWords({ at: 0, step: 'remediate:block', detail: { reason: 'QUORUM_AT_RISK', message: 'Removing etcd-0 would break quorum.' } })).toBe(
      'QUORUM_AT_RISK: Removing etcd-0 would break quorum.',
    );
    expect(journalWords({ at: 0, ...sampleLine('retry-scheduled') })).toBe('attempt 2 at 2025-06-01T12:00:05.000Z (LEADER_UNREACHABLE)');
    expect(journalWords({ at: 0, ...sampleLine('member-removed') })).toBe('removed through etcd-1 (91bc3c398fb3c146) over direct http://127.0.0.1:4001');
    expect(journalWords({ at: 0, step: 'member-removed', detail: { absentFromList: 'etcd-1' } })).toBe('etcd-1 is no longer in the member list');
    expect(journalWords({ at: 0, ...sampleLine('leader-elected') })).toBe('etcd-1 (91bc3c398fb3c146) leads at term 3, 930 ms after the removal');
    expect(
      journalWords({
        at: 0,
        step: 'probed',
        detail: { answered: 0, members: 0, leader: 'none', listFailures: [{ endpoint: 'http://127.0.0.1:4001', reachability: 'refused', latencyMs: 2 }] },
      }),
    ).toBe('no endpoint gave a member list (http://127.0.0.1:4001: refused after 2 ms)');
  });

  it('a timeline has ISO times and the steps in order', () => {
    expect(timelineOf([{ at: 0, ...sampleLine('lock-taken'), isStepMarker: true }, stored('opened', 'kept')])).toEqual([
      { at: '1970-01-01T00:00:00.000Z', step: 'lock-taken', detail: 'held by host:1 in etcd /etcd-remediator/lock/c1' },
      { at: '1970-01-01T00:00:01.000Z', step: 'opened', detail: 'kept' },
    ]);
  });
});
