// After a removal with no leader among the rest, remediate waits for one, asks to look again, and
// the resume approves the next try: the approval in between passes the row of waits on, so the
// looks back off as the planner's own do (resample-wait.ts) instead of one every election wait.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../../functions/core/common/decision.ts';
import { defaultPolicy, type Policy } from '../../../../functions/core/policy/policy.ts';
import { noLeaderAfterRemoval } from '../../../../functions/core/removal/remediation-steps.ts';
import { resampleAt, waitsInARowAfter, WAITS_IN_A_ROW } from '../../../../functions/core/waits/resample-wait.ts';
import { resumeAfterRemoval } from '../../../../functions/core/removal/resume-after-removal.ts';
import { electionWaitMs } from '../../../../functions/core/budget/step-budget.ts';
import { policy } from '../fixtures.ts';

const ET = 1_000;
const MIN = 60_000;
const T0 = 100 * MIN;
const who = 'etcd-1 (a)';

describe('noLeaderAfterRemoval', () => {
  const p = policy({ electionTimeoutMs: ET, incidentDeadlineMs: 30 * MIN, backoff: { capMs: 300_000 } });
  it.each([
    {
      what: 'the first look after the removal: one election timeout',
      before: 0,
      openedAt: T0,
      at: T0 + ET,
      says: /we look again after one election timeout, at /,
    },
    { what: 'the fourth in a row: 8 s', before: 3, openedAt: T0, at: T0 + 8_000, says: /we look again after 8 s \(look 4 in a row\), at / },
    { what: 'at the cap', before: 20, openedAt: T0, at: T0 + 300_000, says: /after 5 min \(look 21 in a row\)/ },
    { what: 'grown past the incident deadline: at the deadline', before: 9, openedAt: T0 - 29 * MIN, at: T0 + MIN, says: /after 60 s \(look 10 in a row\)/ },
  ])('$what', ({ before, openedAt, at, says }) => {
    const decision = noLeaderAfterRemoval(who, { now: T0, openedAt, before }, p);
    expect(decision).toMatchObject({ kind: 'retry', reason: 'ELECTION_IN_PROGRESS', at });
    expect(decision.message).toMatch(/^etcd-1 \(a\) was removed, but the remaining members agree on no leader yet; /);
    expect(decision.message).toMatch(says);
    expect(decision.evidence[WAITS_IN_A_ROW]).toBe(before + 1);
  });
});

describe('the resume after the removal passes the row on', () => {
  const p = policy({ electionTimeoutMs: ET });
  const resume = (last: Decision | undefined): Decision => resumeAfterRemoval({ who, openedAt: T0, now: T0, lastDecision: last, journal: [] }, p);

  it.each([
    { what: 'after the fifth look', last: noLeaderAfterRemoval(who, { now: T0, openedAt: T0, before: 4 }, p), row: 5 },
    {
      what: 'after a look that did not count its place (an older incident)',
      last: { kind: 'retry', at: T0, reprobeNow: false, reason: 'ELECTION_IN_PROGRESS', message: 'm', evidence: {} } satisfies Decision,
      row: 1,
    },
    {
      what: 'after a back-off for a failure: a new row',
      last: { kind: 'retry', at: T0, reprobeNow: false, reason: 'LOCK_UNAVAILABLE', message: 'm', evidence: { [WAITS_IN_A_ROW]: 5 } } satisfies Decision,
      row: 0,
    },
    { what: 'with no decision before it', last: undefined, row: 0 },
  ])('$what: $row', ({ last, row }) => {
    const approval = resume(last);
    expect(approval).toMatchObject({ kind: 'approve' });
    expect(waitsInARowAfter(approval)).toBe(row);
  });
});

/**
 * An incident whose member was removed at its opening and whose cluster never elects a leader
 * among the rest, as the steps run it: remediate waits `electionWaitMs` for a leader, then asks
 * to look again; at that time the resume approves the next remediate, until the resume finds the
 * deadline passed and blocks. Returns how many times remediate ran.
 */
function remediateRuns(p: Policy, next: (now: number, last: Decision | undefined) => Decision): number {
  let now = 0;
  let last: Decision | undefined;
  let runs = 0;
  for (;;) {
    const resumed = resumeAfterRemoval({ who, openedAt: 0, now, lastDecision: last, journal: [] }, p);
    if (resumed.kind === 'block') return runs;
    // The first run is the approval that removed the member; every later one, a resume.
    if (runs > 0) last = resumed;
    runs++;
    const retry = next(now + electionWaitMs(p), last);
    if (retry.kind !== 'retry') throw new Error(`expected a retry, got ${retry.kind}`);
    last = retry;
    now = retry.at;
  }
}

/** Each run costs remediate, schedule-retry, probe-members and move-leader (the last move-leader blocks). */
const invocations = (runs: number): number => 4 * runs;

describe('a cluster with no leader after a removal, for the whole default deadline (30 min)', () => {
  const p = defaultPolicy;
  // Before: every look one election timeout after remediate's wait, the row reset by each resume.
  const before = remediateRuns(p, (now) => ({
    kind: 'retry',
    at: now + p.electionTimeoutMs,
    reprobeNow: false,
    reason: 'ELECTION_IN_PROGRESS',
    message: 'm',
    evidence: {},
  }));
  const after = remediateRuns(p, (now, last) => noLeaderAfterRemoval(who, { now, openedAt: 0, before: waitsInARowAfter(last) }, p));

  it('made a look every 11 s (10 s for a leader, then one election timeout): 164 runs, 656 invocations', () => {
    expect([before, invocations(before)]).toEqual([164, 656]);
  });

  it('now makes 13 runs, 52 invocations: the looks double from one election timeout to the 5-minute cap', () => {
    expect([after, invocations(after)]).toEqual([13, 52]);
  });

  it('looks O(log) times up to the cap, then once a cap: not once every election wait', () => {
    const long = { ...p, incidentDeadlineMs: 4 * p.incidentDeadlineMs };
    const runs = remediateRuns(long, (now, last) => noLeaderAfterRemoval(who, { now, openedAt: 0, before: waitsInARowAfter(last) }, long));
    const doublings = Math.ceil(Math.log2(p.backoff.capMs / p.electionTimeoutMs));
    expect(runs).toBeLessThanOrEqual(doublings + Math.ceil(long.incidentDeadlineMs / p.backoff.capMs) + 1);
  });

  it('the schedule is the planner’s: each look lands where resampleAt puts it', () => {
    const last = noLeaderAfterRemoval(who, { now: 0, openedAt: 0, before: 6 }, p);
    expect(last.kind === 'retry' && last.at).toBe(resampleAt({ now: 0, openedAt: 0, before: 6 }, p));
  });
});
