// The reason table is complete and consistent: tsc holds every code used to be in it (ReasonCode is
// its keys); these hold each row to what the code does where it is used.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { reasonCodeSchema } from '../../../../events/schemas/common.ts';
import { classificationTable } from '../../../../functions/core/common/classification-table.ts';
import { credentialProblem } from '../../../../functions/core/view/credentials.ts';
import type { Decision, DecisionKind } from '../../../../functions/core/common/decision.ts';
import { quorumGate } from '../../../../functions/core/plan/quorum-gate.ts';
import {
  isReasonCode,
  reasonCodes,
  reasonRow,
  reasonTable,
  waitingReasons,
  type ReasonCode,
  type ReasonOutcome,
} from '../../../../functions/core/common/reason-table.ts';
import { cluster, endpointOf, failureOf, id, view } from '../fixtures.ts';

const outcomesOf = (code: ReasonCode): readonly ReasonOutcome[] => reasonRow(code).outcomes;

describe('the reason table', () => {
  it('is what ReasonCode, the events’ enum and isReasonCode are made of', () => {
    expectTypeOf<ReasonCode>().toEqualTypeOf<keyof typeof reasonTable>();
    expectTypeOf<Decision['reason']>().toEqualTypeOf<ReasonCode>();
    expectTypeOf<DecisionKind>().toExtend<ReasonOutcome>();
    expect(reasonCodes).toEqual(Object.keys(reasonTable));
    expect(reasonCodeSchema.options).toEqual(reasonCodes);
    expect(reasonCodes.every(isReasonCode)).toBe(true);
    expect(isReasonCode('BECAUSE')).toBe(false);
    expect(isReasonCode('toString')).toBe(false);
  });

  it.each(reasonCodes)('%s has outcomes and a one-line description', (code) => {
    const row = reasonRow(code);
    expect(row.outcomes.length).toBeGreaterThan(0);
    expect(new Set(row.outcomes).size).toBe(row.outcomes.length);
    expect(row.description).toMatch(/^[A-Z"'a-z].*\.$/);
    expect(row.description).not.toMatch(/\n/);
  });

  it.each(reasonCodes)('%s says whether a retry with it spends an attempt exactly when it can be a retry', (code) => {
    const row = reasonRow(code);
    const retries = outcomesOf(code).includes('retry');
    expect(typeof row.spendsAttempt === 'boolean').toBe(retries);
    if (row.settledByResample) expect(row.spendsAttempt).toBe(false);
  });

  it('derives the waiting reasons: the retries that spend no attempt', () => {
    expect(waitingReasons).toEqual(reasonCodes.filter((c) => reasonRow(c).spendsAttempt === false));
    // As the list stood before the table: a change here changes the attempt budget.
    expect([...waitingReasons].sort()).toEqual(
      [
        'CLUSTER_LOCKED',
        'DISRUPTION_IN_PROGRESS',
        'ELECTION_IN_PROGRESS',
        'FLEET_STORM',
        'LEADER_UNREACHABLE',
        'LEADER_UNREACHABLE_UNCONFIRMED',
        'LEARNER_PENDING',
        'NOSPACE_CLEARING',
        'PAUSED',
        'REMEDIATION_RETRY_PERIOD',
        'REMOVALS_IN_FLIGHT',
        'RUNTIME_RESUMED',
        'STUCK_LEARNER_REMOVED',
      ].sort(),
    );
  });

  it('marks the retries a second sample settles: those the planner looks at again after one election timeout', () => {
    expect(reasonCodes.filter((c) => reasonRow(c).settledByResample)).toEqual(['LEADER_UNREACHABLE_UNCONFIRMED', 'ELECTION_IN_PROGRESS']);
  });
});

describe('the reason table agrees with the rules that use it', () => {
  // A failure that blocks carries its reason on a block; any other is retried with it (by the
  // move driver, or by MemberRemove when every member fails).
  it.each(classificationTable.map((row) => [row.reason, row.class] as const))('classification %s (%s)', (reason, cls) => {
    expect(outcomesOf(reason)).toContain(cls === 'block' ? 'block' : 'retry');
  });

  it.each(['tls', 'auth'] as const)('a credential problem (%s on every path) is a block', (reachability) => {
    const problem = credentialProblem([{ path: 'direct', endpoint: endpointOf(0), reachability, failure: failureOf(reachability) }]);
    expect(outcomesOf(problem!.reason)).toContain('block');
  });

  const gates = [
    quorumGate(cluster(0, 3), id(1)),
    quorumGate(cluster(0, 1), id(0)),
    quorumGate(cluster(0, 3), 'deadbeef'),
    quorumGate(cluster(0, 3, { override: { 1: { paths: 'refused' } } }), id(2)),
    quorumGate(cluster(0, 3, { override: { 1: { paths: 'refused' }, 2: { paths: 'refused' } } }), id(0)),
    quorumGate(
      view(0, [
        { i: 0, leader: 0 },
        { i: 1, leader: 0 },
        { i: 2, learner: true, leader: 0 },
      ]),
      id(2),
    ),
    quorumGate(
      view(0, [
        { i: 0, leader: 0 },
        { i: 1, leader: 0 },
        { i: 2, leader: 0 },
        { i: 3, learner: true, leader: 0 },
      ]),
      id(1),
    ),
  ];

  it('the quorum gate’s verdicts: a pass is a gate result or an approval, a refusal a block', () => {
    expect(new Set(gates.map((g) => g.reason))).toEqual(
      new Set(['QUORUM_SAFE', 'LAST_MEMBER', 'TARGET_NOT_FOUND', 'QUORUM_AT_RISK', 'NO_QUORUM', 'TARGET_IS_LEARNER', 'MEMBER_NOT_READY']),
    );
    for (const gate of gates) {
      if (gate.ok)
        expect(
          outcomesOf(gate.reason).some((o) => o === 'gate' || o === 'approve'),
          gate.reason,
        ).toBe(true);
      else expect(outcomesOf(gate.reason), gate.reason).toContain('block');
    }
  });
});

describe('no stale codes', () => {
  const root = path.resolve(import.meta.dirname, '../../../..');
  const sources = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join(dir, f));
  const code = ['functions', 'infra', 'events']
    .flatMap(sources)
    .filter((f) => !f.endsWith('reason-table.ts'))
    .map((f) => readFileSync(path.join(root, f), 'utf8'))
    .join('\n');

  it.each(reasonCodes)('%s is said somewhere outside the table', (reason) => {
    expect(code).toContain(`'${reason}'`);
  });
});
