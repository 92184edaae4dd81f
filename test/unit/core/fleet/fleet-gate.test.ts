// The fleet's gates through plan(): a pause holds a leader move and a removal, a storm a removal
// only; waits that spend no attempt, looked at again sooner than the storm's lift or the deadline.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../../functions/core/common/decision.ts';
import { fleetWaitsBefore, FLEET_WAITS_IN_A_ROW, type FleetFacts } from '../../../../functions/core/fleet/fleet-gate.ts';
import { plan, type PlanInput } from '../../../../functions/core/plan/plan.ts';
import { reasonRow } from '../../../../functions/core/common/reason-table.ts';
import { cluster, fixedRandom, id, policy } from '../fixtures.ts';

const MIN = 60_000;
const T0 = 100 * MIN;
const pause = { by: 'ops@host', at: T0 - MIN, why: 'zone b maintenance' };
const noFacts: FleetFacts = { pauses: {}, opened: [], registeredClusters: 10 };
const stormy: FleetFacts = {
  pauses: {},
  opened: ['c1', 'c2', 'c3'].map((clusterId, i) => ({ clusterId, openedAt: T0 - 3 * MIN + i })),
  registeredClusters: 10,
};

const follower = cluster(T0, 3, { leader: 1 });
const leaderUp = cluster(T0, 3, { leader: 0 });
const leaderDown = cluster(T0, 3, { leader: 0, override: { 0: { paths: 'refused' } } });

function input(
  samples: PlanInput['samples'],
  facts: FleetFacts,
  lastDecision?: Decision,
  fleet: { stormWindowMs?: number; stormCooldownMs?: number } = {},
): PlanInput {
  return {
    samples,
    targetId: id(0),
    incident: { openedAt: T0 - MIN, attempt: 0, immediateReprobes: 0 },
    remediation: { retryCount: 0 },
    policy: policy({ electionTimeoutMs: 1_000, graceMs: 10 * MIN, fleet }),
    now: T0,
    random: fixedRandom(0.5),
    fleet: { clusterId: 'c1', facts, lastDecision },
  };
}

describe('the fleet gates in plan()', () => {
  const rows: { name: string; samples: PlanInput['samples']; facts: FleetFacts; kind: Decision['kind']; reason: string; says?: RegExp }[] = [
    { name: 'no pause, no storm: the removal is approved', samples: [follower], facts: noFacts, kind: 'approve', reason: 'TARGET_IS_FOLLOWER' },
    {
      name: 'a fleet pause holds the removal',
      samples: [follower],
      facts: { ...noFacts, pauses: { fleet: pause } },
      kind: 'retry',
      reason: 'PAUSED',
      says: /paused fleet-wide by ops@host since .*zone b maintenance.*etcd-remediator resume`/,
    },
    {
      name: 'a pause of this cluster holds the removal',
      samples: [follower],
      facts: { ...noFacts, pauses: { clusters: { c1: pause } } },
      kind: 'retry',
      reason: 'PAUSED',
      says: /cluster c1 is paused.*resume --cluster c1/,
    },
    {
      name: 'a pause of another cluster holds nothing here',
      samples: [follower],
      facts: { ...noFacts, pauses: { clusters: { c2: pause } } },
      kind: 'approve',
      reason: 'TARGET_IS_FOLLOWER',
    },
    {
      name: 'a pause holds a leader move',
      samples: [leaderUp],
      facts: { ...noFacts, pauses: { fleet: pause } },
      kind: 'retry',
      reason: 'PAUSED',
      says: /held: .*move leadership to etcd-1/,
    },
    {
      name: 'a pause lets a wait be a wait',
      samples: [leaderDown],
      facts: { ...noFacts, pauses: { fleet: pause } },
      kind: 'retry',
      reason: 'LEADER_UNREACHABLE_UNCONFIRMED',
    },
    {
      name: 'a storm defers the removal, with its figures',
      samples: [follower],
      facts: stormy,
      kind: 'retry',
      reason: 'FLEET_STORM',
      says: /3 of 10 registered clusters .*\(c3, c2 and c1\), more than the storm threshold of 2 \(20% of 10 registered, at least 2\).*resume --storm/,
    },
    { name: 'a storm does not defer a leader move', samples: [leaderUp], facts: stormy, kind: 'move-leader', reason: 'LEADER_MOVE_REQUIRED' },
    {
      name: 'a storm ended by hand defers nothing',
      samples: [follower],
      facts: { ...stormy, pauses: { stormEnded: { by: 'ops', at: T0 - MIN, why: 'real failures' } } },
      kind: 'approve',
      reason: 'TARGET_IS_FOLLOWER',
    },
    { name: 'a pause and a storm: the pause says it', samples: [follower], facts: { ...stormy, pauses: { fleet: pause } }, kind: 'retry', reason: 'PAUSED' },
  ];
  it.each(rows)('$name', ({ samples, facts, kind, reason, says }) => {
    const d = plan(input(samples, facts));
    expect(d.kind).toBe(kind);
    expect(d.reason).toBe(reason);
    if (says) expect(d.message).toMatch(says);
  });

  it('a fleet wait spends no attempt and looks again after the backoff base, doubling in a row, never past the storm’s lift', () => {
    expect(reasonRow('PAUSED').spendsAttempt).toBe(false);
    expect(reasonRow('FLEET_STORM').spendsAttempt).toBe(false);
    const first = plan(input([follower], { ...noFacts, pauses: { fleet: pause } }));
    expect(first).toMatchObject({
      kind: 'retry',
      at: T0 + 5_000,
      evidence: { [FLEET_WAITS_IN_A_ROW]: 1, decidedBy: 'fleet-pause', pause: { by: 'ops@host', fleetWide: true } },
    });
    const second = plan(input([follower], { ...noFacts, pauses: { fleet: pause } }, first));
    expect(second).toMatchObject({ at: T0 + 10_000, evidence: { [FLEET_WAITS_IN_A_ROW]: 2 } });
    expect(fleetWaitsBefore(second)).toBe(2);
    // Far into a row the wait (the 5 min cap) would pass the storm's lift: the oldest of the three
    // leaves a 4 min window at T0 + 1 min, and a 1 min cooldown lifts it at T0 + 2 min.
    const far = { ...first, evidence: { ...first.evidence, [FLEET_WAITS_IN_A_ROW]: 20 } };
    const storm = plan(input([follower], stormy, far, { stormWindowMs: 4 * MIN, stormCooldownMs: MIN }));
    expect(storm).toMatchObject({ reason: 'FLEET_STORM', at: T0 + 2 * MIN });
  });

  it('never looks past the incident deadline', () => {
    const late = { ...input([follower], { ...noFacts, pauses: { fleet: pause } }), now: T0 - MIN + 30 * MIN - 1_000 };
    expect(plan(late)).toMatchObject({ reason: 'PAUSED', at: T0 - MIN + 30 * MIN });
    expect(plan({ ...late, now: T0 - MIN + 30 * MIN })).toMatchObject({ kind: 'block', reason: 'INCIDENT_DEADLINE_EXCEEDED' });
  });
});
