// The stuck incident's schedule read off the product's planner: it ends at the deadline, blocked,
// and its looks follow the planner's resample waits (one election timeout, doubling to the cap).
import { describe, expect, it } from 'vitest';
import { defaultPolicy, parsePolicy } from '../../functions/core/policy/policy.ts';
import { resampleWaitMs } from '../../functions/core/waits/resample-wait.ts';
import { itemBytes } from '../support/aws-sim/cost-count.ts';
import { stuckSchedule } from './cost-stuck.ts';

describe('a stuck incident, counted from the planner', () => {
  it('ends blocked at its deadline, not before', () => {
    const stuck = stuckSchedule(defaultPolicy, 0);
    expect([stuck.ending.kind, stuck.ending.reason]).toEqual(['block', 'INCIDENT_DEADLINE_EXCEEDED']);
    expect(stuck.elapsedMs).toBeGreaterThanOrEqual(defaultPolicy.incidentDeadlineMs);
  });

  it('with short waits only, its looks are exactly those of the resample waits over the deadline', () => {
    const policy = parsePolicy({ electionTimeoutMs: 500, backoff: { baseMs: 200, capMs: 4_000 }, incidentDeadlineMs: 20_000 });
    let t = 0;
    let expected = 1;
    // Each wait as resampleWaitMs says, clipped to the deadline; one more look at the deadline blocks.
    for (let before = 0; t < policy.incidentDeadlineMs; before++, expected++) t = Math.min(policy.incidentDeadlineMs, t + resampleWaitMs(before, policy));
    const stuck = stuckSchedule(policy, 0);
    expect(stuck.looks).toBe(expected);
    expect(stuck.schedules).toBe(0);
  });

  it('sizes an item as DynamoDB counts it: names and values', () => {
    expect(itemBytes({ pk: { S: 'abc' }, n: { N: '12' }, b: { B: Buffer.from('xyz').toString('base64') } })).toBe(2 + 3 + 1 + 21 + 1 + 3);
  });
});
