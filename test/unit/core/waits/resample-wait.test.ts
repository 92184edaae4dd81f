// Waits that only look again (ELECTION_IN_PROGRESS, LEADER_UNREACHABLE_UNCONFIRMED) grow with each
// one in a row, up to the backoff cap, without breaking the evidence rule (one election timeout
// at least between samples) or the grace window (a look lands at its end, not past it).
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../../functions/core/common/decision.ts';
import { plan, type PlanInput } from '../../../../functions/core/plan/plan.ts';
import { defaultPolicy, type Policy, type PolicyInput } from '../../../../functions/core/policy/policy.ts';
import { resampleAt, resampleWaitMs, waitsInARowAfter, WAITS_IN_A_ROW } from '../../../../functions/core/waits/resample-wait.ts';
import type { ClusterView } from '../../../../functions/core/view/view.ts';
import { cluster, fixedRandom, id, policy } from '../fixtures.ts';

const ET = 1_000;
const MIN = 60_000;
const T0 = 100 * MIN;

describe('resampleWaitMs', () => {
  const p = policy({ electionTimeoutMs: ET, backoff: { baseMs: 5_000, capMs: 20_000 } });
  it.each([
    { before: 0, ms: 1_000 },
    { before: 1, ms: 2_000 },
    { before: 2, ms: 4_000 },
    { before: 4, ms: 16_000 },
    { before: 5, ms: 20_000 },
    { before: 60, ms: 20_000 },
    { before: Number.NaN, ms: 1_000 },
  ])('after $before in a row: $ms ms', ({ before, ms }) => expect(resampleWaitMs(before, p)).toBe(ms));

  it('never shorter than one election timeout, even with a cap below it', () => {
    expect(resampleWaitMs(3, policy({ electionTimeoutMs: 2_000, backoff: { baseMs: 100, capMs: 500 } }))).toBe(2_000);
  });
});

describe('resampleAt', () => {
  const p = policy({ electionTimeoutMs: ET, graceMs: MIN, incidentDeadlineMs: 30 * MIN, backoff: { capMs: 300_000 } });
  it.each([
    { what: 'the first look: one election timeout', facts: { now: T0, openedAt: T0, before: 0 }, at: T0 + ET },
    { what: 'the eighth in a row: 128 s', facts: { now: T0, openedAt: T0, before: 7 }, at: T0 + 128_000 },
    { what: 'grown past the grace window’s end: at its end', facts: { now: T0, openedAt: T0, before: 7, graceFrom: T0 - 20_000 }, at: T0 + 40_000 },
    {
      what: 'the grace window ends within an election timeout: one election timeout, as the evidence rule needs',
      facts: { now: T0, openedAt: T0, before: 7, graceFrom: T0 - MIN + 300 },
      at: T0 + ET,
    },
    { what: 'grown past the incident deadline: at the deadline', facts: { now: T0, openedAt: T0 - 29 * MIN, before: 9 }, at: T0 + MIN },
    {
      what: 'a grace window already over does not pull the look before one election timeout',
      facts: { now: T0, openedAt: T0, before: 2, graceFrom: T0 - 2 * MIN },
      at: T0 + ET,
    },
  ])('$what', ({ facts, at }) => expect(resampleAt(facts, p)).toBe(at));
});

describe('waitsInARowAfter', () => {
  const retry = (reason: Decision['reason'], evidence: Record<string, unknown> = {}): Decision => ({
    kind: 'retry',
    at: T0,
    reprobeNow: false,
    reason,
    message: 'm',
    evidence,
  });
  it.each([
    { what: 'no decision yet', last: undefined, n: 0 },
    { what: 'a wait that said its place', last: retry('ELECTION_IN_PROGRESS', { [WAITS_IN_A_ROW]: 4 }), n: 4 },
    { what: 'an unconfirmed leader that said its place', last: retry('LEADER_UNREACHABLE_UNCONFIRMED', { [WAITS_IN_A_ROW]: 2 }), n: 2 },
    { what: 'a wait made where the row is not counted (after a leader move)', last: retry('ELECTION_IN_PROGRESS'), n: 1 },
    { what: 'a grace-window wait: another kind of wait', last: retry('LEADER_UNREACHABLE', { [WAITS_IN_A_ROW]: 4 }), n: 0 },
    { what: 'a back-off after a failure', last: retry('PATH_TIMEOUT'), n: 0 },
    {
      what: 'an approval',
      last: { kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER', message: 'm', evidence: {} } satisfies Decision,
      n: 0,
    },
    {
      what: 'an approval that passes on the row it was given (nothing removed yet, or a resume after the removal)',
      last: { kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER', message: 'm', evidence: { [WAITS_IN_A_ROW]: 3 } } satisfies Decision,
      n: 3,
    },
    { what: 'a block', last: { kind: 'block', reason: 'QUORUM_AT_RISK', message: 'm', evidence: { [WAITS_IN_A_ROW]: 3 } } satisfies Decision, n: 0 },
  ])('$what: $n', ({ last, n }) => expect(waitsInARowAfter(last)).toBe(n));
});

describe('the planner’s waits grow in a row', () => {
  const noLeader = (at: number): ClusterView => cluster(at, 3, { leader: 'none', override: { 0: { paths: 'refused' } } });
  // The followers name the target leader, but one of its paths fails with TLS: not proof it is down.
  const unconfirmed = (at: number): ClusterView => cluster(at, 3, { leader: 0, override: { 0: { paths: { direct: 'refused', 'exec-relay': 'tls' } } } });
  const input = (samples: ClusterView[], waitsInARow: number, given: PolicyInput = {}): PlanInput => {
    const now = samples.at(-1)!.at;
    return {
      samples,
      targetId: id(0),
      incident: { openedAt: now - MIN, attempt: 0, immediateReprobes: 0, waitsInARow },
      remediation: { retryCount: 0 },
      policy: policy({ electionTimeoutMs: ET, ...given }),
      now,
      random: fixedRandom(0.5),
    };
  };

  it.each([
    {
      what: 'an election, the first look',
      samples: [noLeader(T0)],
      before: 0,
      reason: 'ELECTION_IN_PROGRESS',
      at: T0 + ET,
      says: /we look again after one election timeout, at /,
    },
    {
      what: 'an election, the fourth look in a row',
      samples: [noLeader(T0)],
      before: 3,
      reason: 'ELECTION_IN_PROGRESS',
      at: T0 + 8_000,
      says: /we look again after 8 s \(look 4 in a row\), at /,
    },
    {
      what: 'an election at the cap',
      samples: [noLeader(T0)],
      before: 20,
      reason: 'ELECTION_IN_PROGRESS',
      at: T0 + 300_000,
      says: /after 5 min \(look 21 in a row\)/,
    },
    {
      what: 'an unconfirmed leader, the sixth look in a row',
      samples: [unconfirmed(T0)],
      before: 5,
      reason: 'LEADER_UNREACHABLE_UNCONFIRMED',
      at: T0 + 32_000,
      says: /after 32 s \(look 6 in a row\)/,
    },
  ])('$what', ({ samples, before, reason, at, says }) => {
    const decision = plan(input(samples, before));
    expect(decision).toMatchObject({ kind: 'retry', reason, at });
    expect(decision.message).toMatch(says);
    expect(decision.evidence[WAITS_IN_A_ROW]).toBe(before + 1);
  });

  it('an approval passes the row on: the gates under the lock finding the election again go on from it', () => {
    const follower = cluster(T0, 3, { leader: 1 });
    const approval = plan(input([follower], 3));
    expect(approval).toMatchObject({ kind: 'approve', reason: 'TARGET_IS_FOLLOWER', evidence: { [WAITS_IN_A_ROW]: 3 } });
    const again = plan(input([noLeader(T0)], waitsInARowAfter(approval)));
    expect(again).toMatchObject({ kind: 'retry', reason: 'ELECTION_IN_PROGRESS', at: T0 + 8_000, evidence: { [WAITS_IN_A_ROW]: 4 } });
  });

  it('an approval given no row carries none', () => {
    expect(plan(input([cluster(T0, 3, { leader: 1 })], 0)).evidence).not.toHaveProperty(WAITS_IN_A_ROW);
  });

  it('an unconfirmed dead leader still looks again one election timeout later, however long the row: the evidence rule confirms it there', () => {
    // Every path dead, first seen now: the grace window counts from now, and one election timeout confirms it.
    const dead = cluster(T0, 3, { leader: 0, override: { 0: { paths: 'refused' } } });
    const decision = plan(input([dead], 8, { graceMs: 0 }));
    expect(decision).toMatchObject({ kind: 'retry', reason: 'LEADER_UNREACHABLE_UNCONFIRMED', at: T0 + ET });
  });
});

/**
 * The looks an incident stuck waiting for its whole deadline makes, as a schedule gives them:
 * `nextAt(now, n)` is when the look after n waits in a row runs; the first look at or past the
 * deadline blocks the incident.
 */
function looksUntilDeadline(p: Policy, nextAt: (now: number, before: number) => number): number {
  let now = 0;
  let looks = 1;
  while (now < p.incidentDeadlineMs) {
    now = nextAt(now, looks - 1);
    looks++;
  }
  return looks;
}

/** Each look costs probe-members, move-leader and schedule-retry; the last one, which blocks, no schedule-retry. */
const invocations = (looks: number): number => 3 * looks - 1;

describe('an incident stuck on an election for its whole default deadline (30 min)', () => {
  const p = defaultPolicy;
  // Before: every look one election timeout after the last, until the deadline.
  const before = looksUntilDeadline(p, (now) => now + p.electionTimeoutMs);
  const after = looksUntilDeadline(p, (now, n) => resampleAt({ now, openedAt: 0, before: n }, p));

  it('made a look every election timeout: 1,801 looks, 5,402 invocations', () => {
    expect([before, invocations(before)]).toEqual([1_801, 5_402]);
  });

  it('now makes 15 looks, 44 invocations: doubling from one election timeout to the 5-minute backoff cap', () => {
    expect([after, invocations(after)]).toEqual([15, 44]);
  });
});
