// The row of waits is carried on the incident: each look of an election that does not settle,
// through probe-members, move-leader and schedule-retry as the functions run them, waits twice as
// long as the one before; so does each back-off of a move that reaches the leader on no path.
import { afterEach, describe, expect, it } from 'vitest';
import type { DetailOf } from '../../../../events/catalogue.ts';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { remediate } from '../../../../functions/app/removal/remediate.ts';
import { scheduleRetry } from '../../../../functions/app/incident/schedule-retry.ts';
import { EtcdCallError } from '../../../../functions/ports/etcd.ts';
import { sample, type MemberSpec } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const three = (leader: number | 'none'): MemberSpec[] => [0, 1, 2].map((i) => ({ i, leader }));

/** move-leader on the newest probe, then schedule-retry on what it asked for: the wait, in ms from now. */
async function decideAndSchedule(): Promise<number> {
  await moveLeader(h.deps, h.lastOf('MembersProbed'));
  const now = h.clock.now();
  await scheduleRetry(h.deps, h.lastOf('RetryRequested'));
  return h.scheduled.at(-1)!.at - now;
}

/** The RetryDue the last schedule carries, delivered when it is due. */
async function lookAgain(): Promise<void> {
  const due = h.scheduled.at(-1)!;
  h.clock.set(due.at);
  await probeMembers(h.deps, { detailType: 'RetryDue', detail: due.event.detail as DetailOf<'RetryDue'> });
}

describe('waits in a row', () => {
  it('an election that does not settle: 1 s, 2 s, 4 s, 8 s', async () => {
    h = harness({ electionTimeoutMs: 1_000 });
    h.setSample((at) => sample(at, three('none')));
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    const waits = [await decideAndSchedule()];
    for (let i = 0; i < 3; i++) {
      await lookAgain();
      waits.push(await decideAndSchedule());
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(h.lastOf('RetryRequested').reason).toBe('ELECTION_IN_PROGRESS');
  });

  it('no leader among the rest after a removal: the resume between two looks passes the row on, one election timeout then two', async () => {
    // 500 ms: remediate's wait for a leader is then its floor, 5 s a run.
    h = harness({ electionTimeoutMs: 500 });
    h.setSample((at) => sample(at, three(0)));
    h.onMemberRemove = () =>
      h.setSample((at) =>
        sample(at, [
          { i: 0, leader: 'none' },
          { i: 2, leader: 'none' },
        ]),
      );
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    await moveLeader(h.deps, h.lastOf('MembersProbed'));
    const waits: number[] = [];
    for (let run = 0; run < 2; run++) {
      // The first run removes the member; the second is the resume's approval.
      expect(await remediate(h.deps, h.lastOf('RemediationApproved'))).toMatchObject({ kind: 'retry', reason: 'ELECTION_IN_PROGRESS' });
      const now = h.clock.now();
      await scheduleRetry(h.deps, h.lastOf('RetryRequested'));
      waits.push(h.scheduled.at(-1)!.at - now);
      await lookAgain();
      expect(await moveLeader(h.deps, h.lastOf('MembersProbed'))).toMatchObject({ kind: 'approve', evidence: { resumed: true } });
    }
    expect(waits).toEqual([500, 1_000]);
    expect(h.calls.memberRemove).toHaveLength(1);
  }, 30_000);

  it('a leader every move fails to reach: the re-probe between two back-offs passes the row on, 2.5 s then 5 s then 10 s', async () => {
    h = harness({ maxImmediateReprobes: 1, backoff: { baseMs: 5_000, capMs: 300_000 } });
    h.setSample((at) => sample(at, three(0)));
    h.onMoveLeader = () => {
      throw new EtcdCallError({ kind: 'refused', message: 'connect ECONNREFUSED 127.0.0.1:4001' });
    };
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-0') });
    const waits = [await decideAndSchedule()];
    for (let i = 0; i < 5; i++) {
      await lookAgain();
      waits.push(await decideAndSchedule());
    }
    // Full jitter at 0.5: half of 5 s, 10 s, 20 s; each back-off after one immediate re-probe.
    expect(waits).toEqual([0, 2_500, 0, 5_000, 0, 10_000]);
    expect(h.lastOf('RetryRequested').reason).toBe('LEADER_UNREACHABLE');
    expect(h.calls.moveLeader.length).toBeGreaterThanOrEqual(6);
  });
});
