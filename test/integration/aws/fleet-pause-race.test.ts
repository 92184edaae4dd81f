// A pause raced against a removal on DynamoDB (dynalite), as two Lambda containers would: one
// store client writes the pause while the pipeline's remediate step, on a client of its own, runs.
// A removal after the pause is written is one that took its slot before: past the gate, it
// finishes; a step that takes its slot later reads the pause and waits, PAUSED.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { moveLeader } from '../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../support/probe-members.ts';
import { remediate } from '../../../functions/app/removal/remediate.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { sample } from '../../unit/core/fixtures.ts';
import { harness, unhealthy } from '../../unit/app/harness.ts';

let dynamo: Dynalite;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo?.close());

const ROUNDS = 14;

describe('a pause racing a removal on two DynamoDB clients', () => {
  it(`in ${ROUNDS} rounds, a member removed after the pause was written is one whose slot was taken before`, async () => {
    const outcomes: string[] = [];
    const violations: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const h = harness({ snapshotBeforeRemove: false });
      const tableName = await dynamo.createTable();
      const pipelineStore = createDynamoIncidentStore({ client: dynamo.client(), tableName });
      const operator = createDynamoIncidentStore({ client: dynamo.client(), tableName });
      let pauseWritten = false;
      let slotBeganAfterPause = false;
      // The pause is sent as the step makes its n-th store call, a little later each round, so it
      // lands at every point of the step in turn.
      let storeCalls = 0;
      let pausing: Promise<void> | undefined;
      const triggerAt = round * 2;
      const startPause = () => {
        pausing ??= operator.setPause(undefined, { by: 'ops', at: h.clock.now(), why: 'race' }).then(() => {
          pauseWritten = true;
        });
      };
      h.deps.store = new Proxy(pipelineStore, {
        get(target, key, receiver) {
          const value: unknown = Reflect.get(target, key, receiver);
          if (typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            if (armed && ++storeCalls >= triggerAt) startPause();
            const beganAfterPause = pauseWritten;
            const result: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            if (key === 'takeRemovalSlot') slotBeganAfterPause = beganAfterPause;
            return result;
          };
        },
      });
      let armed = false;
      try {
        h.setSample((at) =>
          sample(
            at,
            [0, 1, 2].map((i) => ({ i, leader: 0 })),
          ),
        );
        h.onMemberRemove = () => {
          if (pauseWritten && slotBeganAfterPause) violations.push(`round ${round}: removed by a step that took its slot once the pause was written`);
          h.setSample((at) =>
            sample(at, [
              { i: 0, leader: 0 },
              { i: 2, leader: 0 },
            ]),
          );
        };
        await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
        await moveLeader(h.deps, h.lastOf('MembersProbed'));
        armed = true;
        const result = await remediate(h.deps, h.lastOf('RemediationApproved'));
        startPause();
        await pausing;
        outcomes.push(typeof result === 'string' ? result : (result?.reason ?? 'none'));
        // Held means nothing was removed; completed means the removal was past the gate first.
        expect(h.calls.memberRemove).toHaveLength(result === 'completed' ? 1 : 0);
      } finally {
        await h.close();
      }
    }
    expect(violations).toEqual([]);
    expect(outcomes.every((o) => o === 'completed' || o === 'PAUSED')).toBe(true);
    // The race went both ways: some removals were past the gate, some were held.
    expect(outcomes).toContain('PAUSED');
    expect(outcomes).toContain('completed');
  });

  it('a pause written after the gates ran, before the slot is taken, holds the removal: the pauses are read again once the slot is ours', async () => {
    const h = harness({ snapshotBeforeRemove: false });
    const tableName = await dynamo.createTable();
    h.deps.store = createDynamoIncidentStore({ client: dynamo.client(), tableName });
    const operator = createDynamoIncidentStore({ client: dynamo.client(), tableName });
    try {
      h.setSample((at) =>
        sample(
          at,
          [0, 1, 2].map((i) => ({ i, leader: 0 })),
        ),
      );
      await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
      await moveLeader(h.deps, h.lastOf('MembersProbed'));
      // The removal record is read after the gates and before the slot: the pause lands there.
      const removals = h.guard.removals.bind(h.guard);
      h.guard.removals = async () => {
        await operator.setPause('c1', { by: 'ops', at: h.clock.now(), why: 'just now' });
        return removals();
      };
      expect(await remediate(h.deps, h.lastOf('RemediationApproved'))).toMatchObject({ kind: 'retry', reason: 'PAUSED' });
      expect(h.calls.memberRemove).toEqual([]);
      expect(await h.deps.store.removalSlots(h.clock.now())).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
