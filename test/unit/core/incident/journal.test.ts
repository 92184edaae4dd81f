// The typed journal: each line carries the fields its step writes, and is said in words from them.
import { describe, expect, it } from 'vitest';
import { journalWords, timelineOf } from '../../../../functions/core/incident/journal-words.ts';
import {
  isDecisionLine,
  isLine,
  isMoveMadeLine,
  journalSteps,
  markerOf,
  type JournalEntry,
  type NamedStep,
} from '../../../../functions/core/incident/journal.ts';
import { moveMadeLine, sampleDetails, sampleLine } from '../../../support/journal-lines.ts';

describe('reading a line by its step', () => {
  const journal: JournalEntry[] = [
    { at: 1, ...sampleLine('probed'), isStepMarker: false },
    { at: 2, step: 'move-leader:approve', detail: { reason: 'TARGET_IS_FOLLOWER', message: 'etcd-0 follows.' }, isStepMarker: false },
    { at: 3, ...moveMadeLine(2), isStepMarker: true },
    { at: 4, ...sampleLine('leader-elected'), isStepMarker: false },
    { at: 5, ...sampleLine('leader-elected'), isStepMarker: true },
  ];

  it('a decision line, the move marker and a named line are told apart by their step', () => {
    expect(journal.map((e) => [isDecisionLine(e), isMoveMadeLine(e), isLine(e, journalSteps.probed)])).toEqual([
      [false, false, true],
      [true, false, false],
      [false, true, false],
      [false, false, false],
      [false, false, false],
    ]);
  });

  it('the marker of a step is its marked line, not a plain line of the same step', () => {
    expect(markerOf(journal, journalSteps.leaderElected)?.at).toBe(5);
    expect(markerOf(journal, journalSteps.memberRemoved)).toBeUndefined();
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
        detail: {
          answered: 0,
          members: 0,
          leader: 'none',
          listFailures: [{ endpoint: 'http://127.0.0.1:4001', reachability: 'refused', latencyMs: 2 }],
          seen: [],
        },
      }),
    ).toBe('no endpoint gave a member list (http://127.0.0.1:4001: refused after 2 ms)');
  });

  it('a timeline has ISO times and the steps in order', () => {
    expect(
      timelineOf([
        { at: 0, ...sampleLine('lock-taken') },
        { at: 1_000, ...sampleLine('lock-released') },
      ]),
    ).toEqual([
      { at: '1970-01-01T00:00:00.000Z', step: 'lock-taken', detail: 'held by host:1 in etcd /etcd-remediator/lock/c1' },
      { at: '1970-01-01T00:00:01.000Z', step: 'lock-released', detail: 'host:1 let go of etcd /etcd-remediator/lock/c1' },
    ]);
  });
});
