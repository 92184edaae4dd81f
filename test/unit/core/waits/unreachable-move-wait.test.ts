// A leader move that reaches the leader on no path re-probes at once a few times, then backs off;
// the retry spends no attempt, so the back-offs in a row are what make each one longer.
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../../functions/core/waits/retry-after-backoff.ts';
import type { Decision } from '../../../../functions/core/common/decision.ts';
import { pastIncidentDeadline } from '../../../../functions/core/waits/incident-deadline.ts';
import { nextMoveStep, type MoveAttempt, type MoveContext, type MoveLeaderDecision } from '../../../../functions/core/move/move-steps.ts';
import { plan } from '../../../../functions/core/plan/plan.ts';
import { defaultPolicy, type Policy } from '../../../../functions/core/policy/policy.ts';
import { reasonRow } from '../../../../functions/core/common/reason-table.ts';
import type { PathName } from '../../../../functions/core/common/types.ts';
import { unreachableBackoffAt, unreachableBackoffsAfter, UNREACHABLE_BACKOFFS_IN_A_ROW } from '../../../../functions/core/waits/unreachable-move-wait.ts';
import { cluster, endpointOf, failureOf, fixedRandom, id, policy, seeded } from '../fixtures.ts';

const MIN = 60_000;
const NOW = 100 * MIN;
const allPaths = { direct: 'ok', 'port-forward': 'ok', 'exec-relay': 'ok' } as const;

/** etcd-0 leads and answers the probe on every path; etcd-1..3 are candidates. */
function moveDecision(p: Policy): MoveLeaderDecision {
  const v = cluster(NOW, 4, { leader: 0, override: { 0: { paths: allPaths }, 1: { applied: 300 }, 2: { applied: 200 }, 3: { applied: 100 } } });
  const d = plan({
    samples: [v],
    targetId: id(0),
    incident: { openedAt: NOW, attempt: 0, immediateReprobes: 0 },
    remediation: { retryCount: 0 },
    policy: p,
    now: NOW,
    random: fixedRandom(0.5),
  });
  if (d.kind !== 'move-leader') throw new Error(`expected move-leader, got ${d.kind}: ${d.message}`);
  return d;
}

/** Every path to the leader refused the move: what the probe reaches, the move does not. */
const everyPathFailed: MoveAttempt[] = (['direct', 'port-forward', 'exec-relay'] as PathName[]).map((path) => ({
  path,
  endpoint: endpointOf(0, path),
  candidateId: id(1),
  at: NOW,
  outcome: failureOf('refused'),
}));

describe('a move that reaches the leader on no path', () => {
  const p = policy({ maxImmediateReprobes: 3, backoff: { baseMs: 5_000, capMs: 300_000 }, incidentDeadlineMs: 30 * MIN });
  const decision = moveDecision(p);
  const half = fixedRandom(0.5);
  const ctx = (over: Partial<MoveContext>): MoveContext => ({ policy: p, now: NOW, random: half, attempt: 2, immediateReprobes: 3, openedAt: NOW, ...over });

  it.each([
    { what: 'a re-probe left: re-probes now and passes the row on', over: { immediateReprobes: 1, unreachableBackoffs: 4 }, reprobeNow: true, at: NOW, row: 4 },
    { what: 'the first back-off: the incident’s own backoff, as before', over: {}, reprobeNow: false, at: NOW + backoffDelay(2, p, half), row: 1 },
    {
      what: 'the fourth back-off in a row: three doublings more',
      over: { unreachableBackoffs: 3 },
      reprobeNow: false,
      at: NOW + backoffDelay(5, p, half),
      row: 4,
      says: /\(back-off 4 in a row\)\.$/,
    },
    { what: 'far along the row: held to the cap', over: { unreachableBackoffs: 40 }, reprobeNow: false, at: NOW + 150_000, row: 41 },
    {
      what: 'grown past the incident deadline: at the deadline',
      over: { unreachableBackoffs: 10, openedAt: NOW - 29 * MIN },
      reprobeNow: false,
      at: NOW + MIN,
      row: 11,
    },
  ])('$what', ({ over, reprobeNow, at, row, says }) => {
    const step = nextMoveStep(decision, everyPathFailed, ctx(over));
    expect(step).toMatchObject({ kind: 'retry', reason: 'LEADER_UNREACHABLE', reprobeNow, at, evidence: { [UNREACHABLE_BACKOFFS_IN_A_ROW]: row } });
    if (step.kind !== 'retry') throw new Error('expected a retry');
    expect(step.message).toMatch(/^Every path to the leader etcd-0 .* failed \(/);
    if (says) expect(step.message).toMatch(says);
    expect(unreachableBackoffsAfter(step)).toBe(row);
  });

  it('with no path known at all, backs off the same way', () => {
    const step = nextMoveStep({ ...decision, paths: [] }, [], ctx({ unreachableBackoffs: 3 }));
    expect(step).toMatchObject({
      kind: 'retry',
      reason: 'LEADER_UNREACHABLE',
      at: NOW + backoffDelay(5, p, half),
      evidence: { [UNREACHABLE_BACKOFFS_IN_A_ROW]: 4 },
    });
  });

  it('spends no attempt, so the row is all that makes the wait grow', () => {
    expect(reasonRow('LEADER_UNREACHABLE').spendsAttempt).toBe(false);
  });
});

describe('unreachableBackoffsAfter', () => {
  const retry = (reason: 'LEADER_UNREACHABLE' | 'ETCD_TRANSIENT', evidence: Record<string, unknown>): Decision => ({
    kind: 'retry',
    reason,
    at: NOW,
    reprobeNow: false,
    message: 'm',
    evidence,
  });
  it.each([
    { what: 'no decision yet', last: undefined, row: 0 },
    { what: 'a move’s back-off, the third in a row', last: retry('LEADER_UNREACHABLE', { [UNREACHABLE_BACKOFFS_IN_A_ROW]: 3 }), row: 3 },
    { what: 'the planner’s grace-window wait, which says no row', last: retry('LEADER_UNREACHABLE', {}), row: 0 },
    { what: 'another reason: a new row', last: retry('ETCD_TRANSIENT', { [UNREACHABLE_BACKOFFS_IN_A_ROW]: 3 }), row: 0 },
    { what: 'a row that is not a count', last: retry('LEADER_UNREACHABLE', { [UNREACHABLE_BACKOFFS_IN_A_ROW]: 'many' }), row: 0 },
  ])('$what: $row', ({ last, row }) => {
    expect(unreachableBackoffsAfter(last)).toBe(row);
  });
});

describe('unreachableBackoffAt', () => {
  const p = policy({ backoff: { baseMs: 5_000, capMs: 300_000 }, incidentDeadlineMs: 30 * MIN });
  it('keeps full jitter: anywhere from now to the ceiling, never past the cap', () => {
    const facts = { now: NOW, openedAt: NOW, attempt: 0, before: 30 };
    expect(unreachableBackoffAt({ ...facts, random: fixedRandom(0) }, p)).toBe(NOW);
    expect(unreachableBackoffAt({ ...facts, random: fixedRandom(0.999_999) }, p)).toBe(NOW + 299_999);
  });
});

/**
 * An incident whose leader answers every probe while every move to it fails on every path, as
 * move-leader runs it: each look is one move-leader run (after its probe), whose retry
 * schedule-retry takes (the re-probes at once, the back-offs at their time), until the look at
 * the deadline, where the planner blocks. The re-probes take no time here. `row` says whether the
 * back-offs in a row are counted, as now, or not, as before.
 */
function looksUntilDeadline(p: Policy, random: () => number, row: boolean): { looks: number; backoffs: number } {
  const decision = moveDecision(p);
  let now = 0;
  let reprobes = 0;
  let last: Decision | undefined;
  let looks = 0;
  let backoffs = 0;
  while (!pastIncidentDeadline(0, now, p)) {
    looks++;
    const step = nextMoveStep(decision, everyPathFailed, {
      policy: p,
      now,
      random,
      attempt: 0,
      immediateReprobes: reprobes,
      openedAt: 0,
      unreachableBackoffs: row ? unreachableBackoffsAfter(last) : 0,
    });
    if (step.kind !== 'retry') throw new Error(`expected a retry, got ${step.kind}`);
    if (!step.reprobeNow) backoffs++;
    reprobes = step.reprobeNow ? reprobes + 1 : 0;
    last = step;
    now = step.at;
  }
  return { looks: looks + 1, backoffs };
}

/** Each look costs probe-members, move-leader and schedule-retry; the last, which blocks, no schedule-retry. */
const invocations = (looks: number): number => 3 * looks - 1;

describe('a leader every move fails to reach, for the whole default deadline (30 min)', () => {
  const p = defaultPolicy;
  // Full jitter at its mean: each wait half its ceiling.
  const mean = fixedRandom(0.5);
  const before = looksUntilDeadline(p, mean, false);
  const after = looksUntilDeadline(p, mean, true);

  it('backed off 2.5 s at a time after each 3 re-probes: 2,881 looks, 8,642 invocations', () => {
    expect([before.looks, invocations(before.looks), before.backoffs]).toEqual([2_881, 8_642, 720]);
  });

  it('now makes 69 looks, 206 invocations: the back-offs double from the incident’s backoff to the 5-minute cap', () => {
    expect([after.looks, invocations(after.looks), after.backoffs]).toEqual([69, 206, 17]);
  });

  it('backs off O(log) times up to the cap, then once per half a cap: not once every base backoff', () => {
    const long = { ...p, incidentDeadlineMs: 4 * p.incidentDeadlineMs };
    const doublings = Math.ceil(Math.log2(p.backoff.capMs / p.backoff.baseMs));
    const bound = doublings + Math.ceil(long.incidentDeadlineMs / (p.backoff.capMs / 2)) + 1;
    expect(looksUntilDeadline(long, mean, true).backoffs).toBeLessThanOrEqual(bound);
  });

  it.each([1, 2, 3, 4, 5])('with jitter drawn at random (seed %i), within twice the count at the mean', (seed) => {
    const drawn = looksUntilDeadline(p, seeded(seed), true);
    expect(drawn.looks).toBeLessThanOrEqual(2 * after.looks);
  });
});
