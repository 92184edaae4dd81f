// The fleet's gates in the pipeline, on the harness's real SQLite store: a pause holds a removal
// approved before it was written, a storm defers a removal in the planner, the cap makes a removal
// wait for a slot, and the slot goes back however the step ends.
import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { remediate } from '../../../../functions/app/removal/remediate.ts';
import { EtcdCallError } from '../../../../functions/ports/etcd.ts';
import { createStaticDirectory } from '../../../../functions/adapters/local/static-directory.ts';
import { id, sample, type MemberSpec } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness, retryToRemediate } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const three = (leader: number): MemberSpec[] => [0, 1, 2].map((i) => ({ i, leader }));
const pause = { by: 'ops@box', at: 0, why: 'zone b is flapping' };

async function report(memberName: string) {
  await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy(memberName) });
  return moveLeader(h.deps, h.lastOf('MembersProbed'));
}

function setUp() {
  h = harness({ backoff: { baseMs: 1_000, capMs: 1_000 }, fleet: { maxRemovalsInFlight: 2 } });
  h.setSample((at) => sample(at, three(0)));
  h.onMemberRemove = () =>
    h.setSample((at) =>
      sample(at, [
        { i: 0, leader: 0 },
        { i: 2, leader: 0 },
      ]),
    );
}

describe('fleet gates in the pipeline', () => {
  it('a pause written after approval holds the removal under the lock; resume lets it finish', async () => {
    setUp();
    await report('etcd-1');
    await h.deps.store.setPause(undefined, { ...pause, at: h.clock.now() });
    expect(await remediate(h.deps, h.lastOf('RemediationApproved'))).toMatchObject({ kind: 'retry', reason: 'PAUSED' });
    expect(h.calls.memberRemove).toEqual([]);
    expect(h.lastOf('RetryRequested').message).toMatch(/paused fleet-wide by ops@box .*zone b is flapping.*etcd-remediator resume/);
    await h.deps.store.setPause(undefined, null);
    expect(await retryToRemediate(h)).toBe('completed');
    expect(h.calls.memberRemove).toEqual([id(1)]);
    expect(await h.deps.store.removalSlots(h.clock.now())).toEqual([]);
  });

  it('while paused the probe and the plan run and say PAUSED; no leader is moved', async () => {
    setUp();
    await h.deps.store.setPause('c1', { ...pause, at: h.clock.now() });
    await report('etcd-0');
    expect(h.lastOf('MembersProbed')).toBeDefined();
    expect(h.lastOf('RetryRequested')).toMatchObject({ reason: 'PAUSED' });
    expect(h.lastOf('RetryRequested').message).toMatch(/cluster c1 is paused .*held: .*move leadership/);
    expect(h.calls.moveLeader).toEqual([]);
  });

  it('a storm defers the removal in the plan, and resume --storm lets it go on', async () => {
    setUp();
    // Two other clusters opened incidents just now: 3 of 3 known clusters.
    await h.deps.store.noteOpened('c2', h.clock.now());
    await h.deps.store.noteOpened('c3', h.clock.now());
    await report('etcd-1');
    expect(h.lastOf('RetryRequested')).toMatchObject({ reason: 'FLEET_STORM' });
    expect(h.lastOf('RetryRequested').message).toMatch(/3 of 3 registered clusters/);
    await h.deps.store.endStorm({ by: 'ops', at: h.clock.now(), why: 'the failures are real' });
    h.clock.advance(1);
    expect(await retryToRemediate(h)).toBe('completed');
  });

  it('only the directory’s clusters count toward a storm: a state file’s cluster no longer configured does not', async () => {
    setUp();
    h.deps.directory = createStaticDirectory([h.cluster]);
    // Another cluster remediated with the same state file a moment ago, not in this directory.
    await h.deps.store.noteOpened('elsewhere', h.clock.now());
    expect(await report('etcd-1')).toMatchObject({ kind: 'approve' });
  });

  it('waits for a slot when every slot is held, and takes it once one is released', async () => {
    setUp();
    await report('etcd-1');
    for (const owner of ['other-1', 'other-2']) {
      expect(await h.deps.store.takeRemovalSlot({ owner, clusterId: 'c9', max: 2, leaseMs: 600_000, now: h.clock.now() })).toMatchObject({ taken: true });
    }
    expect(await remediate(h.deps, h.lastOf('RemediationApproved'))).toMatchObject({ kind: 'retry', reason: 'REMOVALS_IN_FLIGHT' });
    expect(h.lastOf('RetryRequested').message).toMatch(
      /2 removals are in flight across the fleet \(cluster c9 \(incident other-1\), cluster c9 \(incident other-2\)\), the most maxRemovalsInFlight allows \(2\)/,
    );
    expect(h.calls.memberRemove).toEqual([]);
    await h.deps.store.releaseRemovalSlot('other-2');
    expect(await retryToRemediate(h)).toBe('completed');
    expect((await h.deps.store.removalSlots(h.clock.now())).map((s) => s.owner)).toEqual(['other-1']);
  });

  it('gives the slot back when the removal fails', async () => {
    setUp();
    await report('etcd-1');
    h.onMemberRemove = () => {
      throw new EtcdCallError({ kind: 'other', message: 'etcdserver: request timed out' });
    };
    expect(await remediate(h.deps, h.lastOf('RemediationApproved'))).toMatchObject({ kind: 'retry' });
    expect(h.calls.memberRemove).toEqual([id(1)]);
    expect(await h.deps.store.removalSlots(h.clock.now())).toEqual([]);
  });
});
